package coalesce

import "slices"

// Calls calls fn for each key added, from a goroutine of its own, so that
// callers (which may hold locks of their own) never wait for fn and fn
// never runs under their locks. A key added again before its call is
// called once; calls never overlap, and each batch is called in the order
// compare gives.
type Calls[K comparable] struct {
	fn      func(K)
	compare func(a, b K) int

	keys    Keys[K]
	running bool // under keys.mu
}

// NewCalls makes a Calls; a nil fn makes Add do nothing.
func NewCalls[K comparable](fn func(K), compare func(a, b K) int) *Calls[K] {
	return &Calls[K]{fn: fn, compare: compare}
}

// Add schedules a call for each key. It never blocks on fn.
func (c *Calls[K]) Add(keys ...K) {
	if c.fn == nil || len(keys) == 0 {
		return
	}
	c.keys.mu.Lock()
	defer c.keys.mu.Unlock()
	c.keys.addLocked(keys)
	if !c.running {
		c.running = true
		go c.run()
	}
}

// run calls fn on the pending keys, batch after batch, and exits when none
// are left.
func (c *Calls[K]) run() {
	for {
		c.keys.mu.Lock()
		keys := c.keys.takeLocked()
		if len(keys) == 0 {
			c.running = false
			c.keys.mu.Unlock()
			return
		}
		c.keys.mu.Unlock()
		slices.SortFunc(keys, c.compare)
		for _, k := range keys {
			c.fn(k)
		}
	}
}
