package agent

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestNotifier(t *testing.T) {
	var running, overlaps atomic.Int32
	var mu sync.Mutex
	seen := map[Key]int{}
	release := make(chan struct{})
	n := newNotifier(func(k Key) {
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		<-release
		mu.Lock()
		seen[k]++
		mu.Unlock()
		running.Add(-1)
	})
	a, b := Key{Name: "a"}, Key{Name: "b"}
	n.add(a) // its call blocks until release
	time.Sleep(20 * time.Millisecond)
	for range 100 {
		n.add(a, b) // coalesced while the first call runs; add never blocks
	}
	close(release)
	waitUntil(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[a] == 2 && seen[b] == 1
	})
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if seen[a] != 2 || seen[b] != 1 || overlaps.Load() != 0 {
		t.Fatalf("calls %v, overlaps %d; want a twice, b once, never two at once", seen, overlaps.Load())
	}
	newNotifier(nil).add(a) // no OnChange: nothing happens
}
