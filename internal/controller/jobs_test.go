package controller

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
	j := newJobs[string]("test", logr.Discard(), 4)
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
	j.hand("a", func(ctx context.Context) error {
		close(started)
		return record("a", "a1", release)(ctx)
	})
	<-started
	j.hand("a", record("a", "a2", nil)) // replaced before it starts
	j.hand("a", record("a", "a3", nil))
	otherDone := make(chan struct{})
	j.hand("b", func(ctx context.Context) error {
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
	j.hand("c", func(context.Context) error {
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
