// Package logsample decides which of a stream of similar log lines are
// written: the agent port's refusals (any pod can send them in a flood)
// and what authenticated data-plane pods report (one pod must not flood the
// manager's log either). A Sampler writes at most Burst lines per Interval;
// a Keyed sampler does so for each key (a peer), keeping a bounded number of
// keys. The first line written after some were dropped says how many.
package logsample

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// At most Burst lines per Interval are written for each kind of line (and,
// with Keyed, each key).
const (
	Interval = 10 * time.Second
	Burst    = 10
)

// Sampler decides which of a stream of similar lines are written.
type Sampler struct {
	now        func() time.Time
	droppedKey string

	mu      sync.Mutex
	start   time.Time // of the current interval
	logged  int       // in the current interval
	dropped int       // since the last line written
}

// New returns a Sampler reading the clock with now; the first line written
// after some were dropped carries their count under droppedKey
// ("refusalsNotLogged", say).
func New(now func() time.Time, droppedKey string) *Sampler {
	return &Sampler{now: now, droppedKey: droppedKey}
}

// take says whether to write this line and, if so, how many were dropped
// since the last one written.
func (s *Sampler) take() (write bool, dropped int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.now(); now.Sub(s.start) >= Interval {
		s.start, s.logged = now, 0
	}
	if s.logged >= Burst {
		s.dropped++
		return false, 0
	}
	s.logged++
	dropped, s.dropped = s.dropped, 0
	return true, dropped
}

// quiet says whether the sampler would write a line now and has nothing
// dropped to report: forgetting it loses nothing.
func (s *Sampler) quiet(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped == 0 && now.Sub(s.start) >= Interval
}

// Info writes msg with keysAndValues on log if this line is sampled.
func (s *Sampler) Info(log logr.Logger, msg string, keysAndValues ...any) {
	ok, dropped := s.take()
	if !ok {
		return
	}
	if dropped > 0 {
		keysAndValues = append(keysAndValues, s.droppedKey, dropped)
	}
	log.Info(msg, keysAndValues...)
}

// Keyed is a Sampler per key. It keeps at most max keys: when full, it
// forgets those that have nothing to report, then all of them (a flood of
// keys then logs a burst per key again, bounded by the keys it can hold).
type Keyed[K comparable] struct {
	now        func() time.Time
	droppedKey string
	max        int

	mu   sync.Mutex
	keys map[K]*Sampler
}

// NewKeyed returns a Keyed sampler of at most max keys.
func NewKeyed[K comparable](now func() time.Time, droppedKey string, max int) *Keyed[K] {
	return &Keyed[K]{now: now, droppedKey: droppedKey, max: max, keys: make(map[K]*Sampler)}
}

// Info writes msg with keysAndValues on log if this line of key is sampled.
func (k *Keyed[K]) Info(key K, log logr.Logger, msg string, keysAndValues ...any) {
	k.sampler(key).Info(log, msg, keysAndValues...)
}

func (k *Keyed[K]) sampler(key K) *Sampler {
	k.mu.Lock()
	defer k.mu.Unlock()
	if s := k.keys[key]; s != nil {
		return s
	}
	if len(k.keys) >= k.max {
		now := k.now()
		for key, s := range k.keys {
			if s.quiet(now) {
				delete(k.keys, key)
			}
		}
		if len(k.keys) >= k.max {
			clear(k.keys)
		}
	}
	s := New(k.now, k.droppedKey)
	k.keys[key] = s
	return s
}
