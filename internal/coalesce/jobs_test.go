package coalesce

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// TestJobsRunTheNewestPerKey: a job handed while the key's job runs waits
// for it, a newer one replaces it before it starts, other keys run
// meanwhile, and a failed job is retried until it succeeds.
func TestJobsRunTheNewestPerKey(t *testing.T) {
	j := NewJobs[string]("test", logr.Discard(), 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = j.Start(ctx) }()

	var mu sync.Mutex
	var ran []string
	running := map[string]bool{}
	record := func(key, name string, hold <-chan struct{}) func(context.Context) error {
		return func(context.Context) error {
			mu.Lock()
			if running[key] {
				t.Errorf("%s ran while another job of key %s ran", name, key)
			}
			running[key] = true
			mu.Unlock()
			if hold != nil {
				<-hold
			}
			mu.Lock()
			running[key] = false
			ran = append(ran, name)
			mu.Unlock()
			return nil
		}
	}
	release := make(chan struct{})
	started := make(chan struct{})
	j.Hand("a", func(ctx context.Context) error {
		close(started)
		return record("a", "a1", release)(ctx)
	})
	<-started
	j.Hand("a", record("a", "a2", nil)) // replaced before it starts
	j.Hand("a", record("a", "a3", nil))
	otherDone := make(chan struct{})
	j.Hand("b", func(ctx context.Context) error {
		defer close(otherDone)
		return record("b", "b1", nil)(ctx)
	})
	select {
	case <-otherDone:
	case <-time.After(10 * time.Second):
		t.Fatal("key b's job did not run while key a's was held")
	}
	close(release)

	attempts := 0
	failedThenOK := make(chan struct{})
	j.Hand("c", func(context.Context) error {
		if attempts++; attempts < 3 {
			return errors.New("refused")
		}
		close(failedThenOK)
		return nil
	})
	select {
	case <-failedThenOK:
	case <-time.After(10 * time.Second):
		t.Fatalf("a failing job was not retried (%d attempts)", attempts)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), ran...)
		mu.Unlock()
		if len(got) == 3 {
			if got[0] != "b1" || got[1] != "a1" || got[2] != "a3" {
				t.Errorf("jobs ran %v, want [b1 a1 a3]: a2 was replaced by a3 before it started", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs ran %v, want [b1 a1 a3]", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJobsPacedByCost: after a job that took d, the key's next job starts
// no sooner than pace×d after it ended and is the newest handed meanwhile;
// the pause is capped; a key's pause leaves no state behind once over.
func TestJobsPacedByCost(t *testing.T) {
	j := NewJobs[string]("test", logr.Discard(), 2).Paced(3, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = j.Start(ctx) }()

	type run struct {
		name       string
		start, end time.Time
	}
	runs := make(chan run, 10)
	job := func(name string, took time.Duration) func(context.Context) error {
		return func(context.Context) error {
			r := run{name: name, start: time.Now()}
			time.Sleep(took)
			r.end = time.Now()
			runs <- r
			return nil
		}
	}
	next := func() run {
		select {
		case r := <-runs:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no job ran within 10 s")
			return run{}
		}
	}
	j.Hand("a", job("a1", 100*time.Millisecond))
	first := next()
	for _, name := range []string{"a2", "a3", "a4"} {
		j.Hand("a", job(name, 0))
	}
	second := next()
	if second.name != "a4" {
		t.Errorf("after the pause %s ran, want a4 (the newest handed meanwhile)", second.name)
	}
	took := first.end.Sub(first.start)
	if gap := second.start.Sub(first.end); gap < 3*took {
		t.Errorf("the next job started %v after one that took %v, want at least 3 times that", gap, took)
	}
	select {
	case r := <-runs:
		t.Errorf("%s ran too: the jobs it replaced must not run", r.name)
	case <-time.After(200 * time.Millisecond):
	}
	waitUntil(t, func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		return len(j.notBefore) == 0
	}, "the pause to leave no entry behind")

	capped := NewJobs[string]("test", logr.Discard(), 1).Paced(3, 50*time.Millisecond)
	if got := capped.pauseAfter(time.Second); got != 50*time.Millisecond {
		t.Errorf("pause after a 1 s job with a 50 ms cap: %v", got)
	}
	if got := NewJobs[string]("test", logr.Discard(), 1).pauseAfter(time.Second); got != 0 {
		t.Errorf("unpaced jobs pause %v", got)
	}
}

// waitUntil waits up to 10 s for cond.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
