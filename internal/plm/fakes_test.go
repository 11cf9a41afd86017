package plm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	apiplm "github.com/gatewall/gatewall/api/plm"
)

// fakeSource is an in-memory object store for the scheduling tests; the
// storage protocol itself is tested against a real server in test/plm.
type fakeSource struct {
	mu      sync.Mutex
	objects map[string][]byte // "bucket/key"
	fail    map[string]error  // "bucket/key" → error returned by Open
	// gated makes Open announce itself on started and wait for a value on
	// release (nil: serve the object; an error: fail with it).
	gated   bool
	started chan string
	release chan error
	current int
	peak    int
	opened  map[string]int
}

func newFakeSource() *fakeSource {
	return &fakeSource{
		objects: make(map[string][]byte),
		fail:    make(map[string]error),
		started: make(chan string, 100),
		release: make(chan error),
		opened:  make(map[string]int),
	}
}

func (s *fakeSource) put(loc string, data []byte) {
	b, k, err := apiplm.ParseLocation(loc)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[b+"/"+k] = data
}

func (s *fakeSource) setFail(loc string, err error) {
	b, k, _ := apiplm.ParseLocation(loc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.fail, b+"/"+k)
	} else {
		s.fail[b+"/"+k] = err
	}
}

func (s *fakeSource) Open(ctx context.Context, bucket, key string) (io.ReadCloser, int64, error) {
	name := bucket + "/" + key
	s.mu.Lock()
	s.current++
	s.peak = max(s.peak, s.current)
	s.opened[name]++
	gated := s.gated
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.current--
		s.mu.Unlock()
	}()

	if gated {
		s.started <- name
		select {
		case err := <-s.release:
			if err != nil {
				return nil, 0, err
			}
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail[name]; err != nil {
		return nil, 0, err
	}
	data, ok := s.objects[name]
	if !ok {
		return nil, 0, fmt.Errorf("NoSuchKey: %s", name)
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

func (s *fakeSource) peakConcurrency() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

func shaOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// harness is a Fetcher on a fake clock and fake source, with its OnChange
// events on a channel so tests wait for outcomes instead of sleeping.
type harness struct {
	t      *testing.T
	f      *Fetcher
	src    *fakeSource
	clock  *clocktesting.FakeClock
	events chan string
	dir    string
	cancel context.CancelFunc
	done   chan error
}

func newHarness(t *testing.T, mutate func(*Options)) *harness {
	t.Helper()
	h := &harness{
		t:      t,
		src:    newFakeSource(),
		clock:  clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		events: make(chan string, 1000),
		dir:    t.TempDir(),
	}
	opts := Options{
		Endpoint:    "http://127.0.0.1:1",
		CacheDir:    h.dir,
		Concurrency: 4,
		MinBackoff:  time.Second,
		MaxBackoff:  time.Minute,
		Clock:       h.clock,
		Jitter:      func() float64 { return 0.5 },
		source:      h.src,
	}
	opts.OnChange = func(sha string) {
		// Reading Result here would deadlock if OnChange ran under the lock.
		_ = h.f.Result(sha)
		h.events <- sha
	}
	if mutate != nil {
		mutate(&opts)
	}
	f, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.f = f
	return h
}

func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.done = make(chan error, 1)
	go func() { h.done <- h.f.Run(ctx) }()
	h.t.Cleanup(h.stop)
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		h.t.Errorf("Run did not return after its context ended")
	}
}

// waitFor waits, event by event, until cond holds for sha's Result. The
// deadline only keeps a broken test from hanging.
func (h *harness) waitFor(sha string, what string, cond func(Result) bool) Result {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if r := h.f.Result(sha); cond(r) {
			return r
		}
		select {
		case <-h.events:
		case <-deadline:
			h.t.Fatalf("%s… never became %s; last Result: %+v", sha[:8], what, h.f.Result(sha))
		}
	}
}

func (h *harness) waitState(sha string, s State) Result {
	h.t.Helper()
	return h.waitFor(sha, string(s), func(r Result) bool { return r.State == s })
}

// waitAttempts waits until sha's Result counts n attempts.
func (h *harness) waitAttempts(sha string, n int) Result {
	h.t.Helper()
	return h.waitFor(sha, fmt.Sprintf("%d attempts", n), func(r Result) bool { return r.Attempts >= n })
}

// waitRunning waits until Run has started, after which Want and the retries
// dispatch attempts before they return.
func (h *harness) waitRunning() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.f.mu.Lock()
		running := h.f.runCtx != nil
		h.f.mu.Unlock()
		if running {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("Run did not start")
		}
		time.Sleep(time.Millisecond)
	}
}
