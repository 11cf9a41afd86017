package coalesce

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCallsCoalesceWhileOneRuns: keys added while a call runs are called
// once each after it, in order, never two calls at once, and Add never
// blocks on the running call.
func TestCallsCoalesceWhileOneRuns(t *testing.T) {
	var running, overlaps atomic.Int32
	var mu sync.Mutex
	var seen []string
	release := make(chan struct{})
	c := NewCalls(func(k string) {
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		if k == "first" {
			<-release
		}
		mu.Lock()
		seen = append(seen, k)
		mu.Unlock()
		running.Add(-1)
	}, strings.Compare)
	c.Add("first") // its call blocks until release
	time.Sleep(20 * time.Millisecond)
	for range 100 {
		c.Add("b", "a") // coalesced while the first call runs
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ","); got != "first,a,b" || overlaps.Load() != 0 {
		t.Fatalf("calls %s, overlaps %d; want first,a,b and never two at once", got, overlaps.Load())
	}
	NewCalls[string](nil, strings.Compare).Add("x") // no fn: nothing happens
}

// TestKeysTakeEachOnce: a key added many times is taken once; Take clears.
func TestKeysTakeEachOnce(t *testing.T) {
	var k Keys[int]
	if got := k.Take(); len(got) != 0 {
		t.Fatalf("zero Keys took %v", got)
	}
	k.Add(1, 2, 1)
	k.Add(2)
	if got := len(k.Take()); got != 2 {
		t.Fatalf("took %d keys, want 2", got)
	}
	if got := k.Take(); len(got) != 0 {
		t.Fatalf("second Take got %v, want nothing", got)
	}
}
