package e2e

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// load sends GET host/ through a Gateway's address every 20 ms until
// halted, counting the requests and those that failed (an error or any
// status but 200).
type load struct {
	sent, failed atomic.Int64
	stop         chan struct{}
	wg           sync.WaitGroup
	once         sync.Once
}

// steadyLoad starts a load; it is halted when the test ends, if not before.
func steadyLoad(t *testing.T, addr, host string) *load {
	l := &load{stop: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			select {
			case <-l.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			l.sent.Add(1)
			if code, _, err := get(addr, host, "/"); err != nil || code != 200 {
				l.failed.Add(1)
				t.Logf("request to %s failed: %d %v", host, code, err)
			}
		}
	}()
	t.Cleanup(l.halt) // a failing test stops the load before it ends
	return l
}

// halt stops the load and waits until its last request has returned.
func (l *load) halt() { l.once.Do(func() { close(l.stop); l.wg.Wait() }) }
