package plm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	apiplm "github.com/gatewall/gatewall/api/plm"
)

// Defaults of Options.
const (
	DefaultConcurrency    = 4
	DefaultMinBackoff     = time.Second
	DefaultMaxBackoff     = 2 * time.Minute
	DefaultAttemptTimeout = 5 * time.Minute
	DefaultMaxBundleSize  = 1 << 30 // 1 GiB: bundles are tens of MB; this only stops runaway objects.
	// DefaultMaxCacheSize bounds the cache's disk and the bundles the manager
	// holds in memory (it serves them to the data planes from there): half
	// of config/manager's memory limit.
	DefaultMaxCacheSize = 256 << 20
)

// Options configure a Fetcher.
type Options struct {
	// Endpoint is the S3-compatible storage URL (--plm-storage-url),
	// http:// or https://, without a path.
	Endpoint string
	// CacheDir holds the verified bundles; created when missing.
	CacheDir string
	// Scope is where bundles may be fetched from (--plm-storage-bucket,
	// --plm-storage-prefix): Want refuses other locations. The zero Scope
	// admits every location.
	Scope apiplm.Scope
	// Concurrency bounds the fetches running at once (default 4).
	Concurrency int
	// MinBackoff and MaxBackoff bound the delay between failed attempts
	// (defaults 1s and 2m).
	MinBackoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one attempt, so a stalled server cannot hold a
	// worker forever (default 5m).
	AttemptTimeout time.Duration
	// MaxBundleSize bounds a bundle's size in bytes (default 1 GiB, at
	// most MaxCacheSize).
	MaxBundleSize int64
	// MaxCacheSize bounds the cache's size in bytes (default 256 MiB): a
	// fetch that does not fit evicts cached bundles nobody wants (the
	// oldest first), and fails when the wanted ones leave no room. The
	// manager holds in memory only bundles of the cache, so this bounds
	// that too.
	MaxCacheSize int64
	// OnChange is called, never under the Fetcher's lock and possibly from
	// several goroutines at once, after a sha256's Result changed. It should
	// only enqueue work (e.g. send a GenericEvent) and read Result for the
	// latest state.
	OnChange func(sha256 string)
	// Log receives fetch failures and cache events.
	Log logr.Logger

	// Clock schedules retries (default: the real clock); tests pass a fake.
	Clock clock.Clock
	// Jitter returns a number in [0, 1) that spreads retries (default:
	// math/rand/v2); tests pass a constant.
	Jitter func() float64

	// source replaces the S3 client in unit tests.
	source objectSource
}

func (o Options) withDefaults() (Options, error) {
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	if o.AttemptTimeout == 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxCacheSize == 0 {
		o.MaxCacheSize = DefaultMaxCacheSize
	}
	if o.MaxBundleSize == 0 {
		o.MaxBundleSize = min(DefaultMaxBundleSize, o.MaxCacheSize)
	}
	if o.OnChange == nil {
		o.OnChange = func(string) {}
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}

	var errs []error
	if err := o.Scope.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("storage scope: %w", err))
	}
	if o.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("concurrency %d: must be positive", o.Concurrency))
	}
	if o.MinBackoff < 0 || o.MaxBackoff < o.MinBackoff {
		errs = append(errs, fmt.Errorf("backoff [%v, %v]: want 0 < min <= max", o.MinBackoff, o.MaxBackoff))
	}
	if o.AttemptTimeout < 0 {
		errs = append(errs, fmt.Errorf("attempt timeout %v: must be positive", o.AttemptTimeout))
	}
	if o.MaxBundleSize < 0 {
		errs = append(errs, fmt.Errorf("max bundle size %d: must be positive", o.MaxBundleSize))
	}
	if o.MaxCacheSize < 0 {
		errs = append(errs, fmt.Errorf("max cache size %d: must be positive", o.MaxCacheSize))
	}
	return o, errors.Join(errs...)
}
