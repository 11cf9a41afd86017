package agent

import (
	"cmp"
	"slices"
	"sync"
)

// notifier calls OnChange for changed keys from a goroutine of its own, so
// that callers of the Server (which may hold locks of their own) and the
// Server's lock are never held while OnChange runs. Keys changed again before
// their call are reported once.
type notifier struct {
	fn      func(Key)
	mu      sync.Mutex
	pending map[Key]struct{}
	running bool
}

func newNotifier(fn func(Key)) *notifier {
	return &notifier{fn: fn, pending: make(map[Key]struct{})}
}

// add schedules a call for each key. It never blocks on fn.
func (n *notifier) add(keys ...Key) {
	if n.fn == nil || len(keys) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, k := range keys {
		n.pending[k] = struct{}{}
	}
	if !n.running {
		n.running = true
		go n.run()
	}
}

// run drains the pending keys in sorted order and exits when none are left.
func (n *notifier) run() {
	for {
		n.mu.Lock()
		if len(n.pending) == 0 {
			n.running = false
			n.mu.Unlock()
			return
		}
		keys := make([]Key, 0, len(n.pending))
		for k := range n.pending {
			keys = append(keys, k)
		}
		clear(n.pending)
		n.mu.Unlock()
		slices.SortFunc(keys, func(a, b Key) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		for _, k := range keys {
			n.fn(k)
		}
	}
}
