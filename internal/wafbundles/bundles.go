package wafbundles

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/policy"
)

// BundleFetcher is what the controllers need of the PLM bundle fetcher.
type BundleFetcher interface {
	Want(refs []plm.BundleRef)
	Result(sha256 string) plm.Result
}

// bundlePruner is a fetcher with a cache to prune (NoStorage has none).
type bundlePruner interface {
	Prune(keep []string) (int, error)
}

// Cache pruning defaults. A bundle leaves the fetcher's cache once it has
// not been wanted for pruneGrace, so a policy or APPolicy status that comes
// back soon (a revert, a rollout) needs no new fetch.
const (
	pruneGrace = 15 * time.Minute
	// pruneEvery bounds how often Sync scans the cache.
	pruneEvery = time.Minute
)

// Bundles brings fetched WAF bundles into snapshots. Bundles are immutable
// (named by sha256), so their bytes are read once and kept while wanted.
//
// What is fetched is declared in one place (Declare, by the BundleWarmer):
// the bundles of the policies that attach to a Gateway of Gatewall's
// classes, on every replica, so a new leader starts with them. Snapshots
// only read what the fetcher has (Fill).
//
// It also prunes the fetcher's on-disk cache of bundles no longer wanted,
// after pruneGrace. Protection in force survives a manager restart without
// storage: a bundle in force is recorded in its policy's status, and
// WantedBundles keeps every recorded bundle wanted, so it is never pruned;
// and nothing is pruned during the first pruneGrace after the manager
// starts, so the bundles the cache holds then stay while the reconcilers
// catch up.
type Bundles struct {
	fetcher BundleFetcher
	clock   clock.PassiveClock
	grace   time.Duration
	log     logr.Logger

	// declaring makes DeclareListed's listing and declaring one step.
	declaring sync.Mutex

	mu sync.Mutex
	// data are the bytes of the declared bundles read so far.
	data     map[string][]byte
	declared map[string]bool
	started  time.Time
	// lastWanted is when each sha256 was last declared.
	lastWanted map[string]time.Time
	lastPrune  time.Time
}

// NewBundles adapts a fetcher.
func NewBundles(f BundleFetcher) *Bundles {
	return newBundles(f, clock.RealClock{}, pruneGrace, ctrl.Log.WithName("bundles"))
}

func newBundles(f BundleFetcher, c clock.PassiveClock, grace time.Duration, log logr.Logger) *Bundles {
	return &Bundles{fetcher: f, clock: c, grace: grace, log: log, data: map[string][]byte{}, declared: map[string]bool{},
		started: c.Now(), lastWanted: map[string]time.Time{}}
}

// DeclareListed runs list, which fills in from the informer cache, then
// Declare, one caller at a time: a listing declared after a newer one would
// tell the fetcher that a bundle just reported is not wanted, and the
// fetcher would forget its integrity failure or backoff and fetch it again
// at the next declaration. The cache only moves forward, so in this order
// every declaration is at least as new as the one before.
func (b *Bundles) DeclareListed(in *graph.Input, list func() error) error {
	b.declaring.Lock()
	defer b.declaring.Unlock()
	if err := list(); err != nil {
		return err
	}
	b.Declare(in)
	return nil
}

// Declare tells the fetcher the full set of bundles to fetch: every bundle
// the snapshot's WAF policies need (in holds exactly the policies whose
// bundles Gatewall fetches, and every PLM object and ReferenceGrant). The
// bytes of bundles no longer declared are let go.
func (b *Bundles) Declare(in *graph.Input) {
	wanted := policy.WantedBundles(in)
	refs := make([]plm.BundleRef, 0, len(wanted))
	keep := map[string]bool{}
	for _, r := range wanted {
		refs = append(refs, plm.BundleRef{Location: r.Location, Sha256: r.Sha256, Revision: r.Revision})
		keep[r.Sha256] = true
	}
	b.fetcher.Want(refs)
	b.mu.Lock()
	defer b.mu.Unlock()
	for sha := range b.data {
		if !keep[sha] {
			delete(b.data, sha)
		}
	}
	b.declared = keep
	now := b.clock.Now()
	for sha := range keep {
		b.lastWanted[sha] = now
	}
	b.pruneLocked(now)
}

// Fill fills the snapshot's Bundles with what the fetcher has of each bundle
// its WAF policies need. Only declared bundles' bytes are kept for the next
// snapshot; a bundle not declared yet (a policy the warmer has not seen) is
// read from the cache if it is there, or reported pending.
func (b *Bundles) Fill(in *graph.Input) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range policy.WantedBundles(in) {
		if _, done := in.Bundles[r.Sha256]; !done {
			in.Bundles[r.Sha256] = b.lookupLocked(r.Sha256)
		}
	}
}

// pruneLocked removes from the fetcher's cache the bundles not wanted for
// the grace period, at most every pruneEvery, never during the grace period
// after start.
func (b *Bundles) pruneLocked(now time.Time) {
	p, ok := b.fetcher.(bundlePruner)
	if !ok || now.Sub(b.started) < b.grace || now.Sub(b.lastPrune) < pruneEvery {
		return
	}
	b.lastPrune = now
	var recent []string
	for sha, at := range b.lastWanted {
		if now.Sub(at) < b.grace {
			recent = append(recent, sha)
		} else {
			delete(b.lastWanted, sha)
		}
	}
	n, err := p.Prune(recent)
	if err != nil {
		b.log.Error(err, "Pruning the WAF bundle cache")
	}
	if n > 0 {
		b.log.Info("Pruned WAF bundles no longer wanted from the cache", "removed", n, "grace", b.grace)
	}
}

func (b *Bundles) lookupLocked(sha string) graph.Bundle {
	r := b.fetcher.Result(sha)
	switch r.State {
	case plm.Fetched:
		data, ok := b.data[sha]
		if !ok {
			var err error
			if data, err = os.ReadFile(r.Path); err != nil {
				return graph.Bundle{State: graph.BundleFailed, Reason: string(plm.ReasonFetchError), Message: fmt.Sprintf("reading the cached bundle: %v", err)}
			}
			if b.declared[sha] {
				b.data[sha] = data
			}
		}
		return graph.Bundle{State: graph.BundleFetched, Data: data, FetchedAt: metav1.NewTime(r.FetchedAt)}
	case plm.Failed:
		return graph.Bundle{State: graph.BundleFailed, Reason: failureReason(r.Reason), Message: r.Message}
	}
	return graph.Bundle{State: graph.BundlePending, Message: r.Message}
}

// failureReason maps the fetcher's reasons to the policy's Programmed reasons.
func failureReason(r plm.Reason) string {
	if r == plm.ReasonIntegrityError {
		return string(plm.ReasonIntegrityError)
	}
	return string(plm.ReasonFetchError)
}

// NoStorage is the fetcher of a manager started without --plm-storage-url:
// every bundle fails with a message saying so.
type NoStorage struct{}

// Want does nothing: there is nowhere to fetch from.
func (NoStorage) Want([]plm.BundleRef) {}

// Result reports the missing configuration.
func (NoStorage) Result(string) plm.Result {
	return plm.Result{State: plm.Failed, Reason: plm.ReasonFetchError, Message: "no PLM storage is configured: start Gatewall with --plm-storage-url"}
}
