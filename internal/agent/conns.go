package agent

import (
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/internal/logsample"
)

// connTracker bounds the agent port's connections (limits.go): in all and
// per peer address, and, among them, those none of whose RPCs has
// authenticated yet (pending). A new connection that finds no place takes
// a pending connection's, closing the oldest pending connection of the
// address that holds the most; it is refused only when every place is an
// authenticated connection's. A pending connection is closed at its
// deadline. An authenticated connection is never closed for another.
type connTracker struct {
	lim     limits
	log     logr.Logger
	sampler *logsample.Sampler

	mu           sync.Mutex
	seq          uint64
	total        int
	byPeer       map[string]int            // connections by host
	pending      map[string][]*trackedConn // not authenticated, by host, oldest first
	pendingTotal int
	byAddr       map[string]*trackedConn // pending, by remote address
}

func newConnTracker(lim limits, log logr.Logger, now func() time.Time) *connTracker {
	return &connTracker{lim: lim, log: log, sampler: logsample.New(now, refusalsNotLogged),
		byPeer: make(map[string]int), pending: make(map[string][]*trackedConn), byAddr: make(map[string]*trackedConn)}
}

// trackedConn is an accepted connection holding its place until it is
// closed. Its fields but net.Conn are guarded by connTracker.mu.
type trackedConn struct {
	net.Conn
	t          *connTracker
	host, addr string
	seq        uint64 // its age: lower is older
	authed     bool
	released   bool // its place is given back
	deadline   *time.Timer
}

// Close gives the connection's place back and closes it.
func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	c.t.releaseLocked(c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

// listener returns l with every accepted connection tracked.
func (t *connTracker) listener(l net.Listener) net.Listener {
	return &trackingListener{Listener: l, t: t}
}

type trackingListener struct {
	net.Listener
	t *connTracker
}

func (l *trackingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc, evicted, reason := l.t.admit(c)
		for _, e := range evicted {
			_ = e.Conn.Close()
			l.t.sampler.Info(l.t.log, "Closed a connection that had not authenticated, for a new one",
				"peer", e.addr, "newPeer", c.RemoteAddr().String())
		}
		if reason != "" {
			_ = c.Close()
			l.t.sampler.Info(l.t.log, "Refused a connection", "peer", c.RemoteAddr().String(), "reason", reason)
			continue
		}
		return tc, nil
	}
}

// admit takes a place for c, closing pending connections for it if
// needed (returned: the caller closes them), or says why it is refused.
func (t *connTracker) admit(c net.Conn) (_ *trackedConn, evicted []*trackedConn, reason string) {
	host := hostOf(c.RemoteAddr())
	t.mu.Lock()
	defer t.mu.Unlock()
	evict := func(from string) bool {
		if from == "" {
			from = t.largestPendingLocked()
		}
		list := t.pending[from]
		if len(list) == 0 {
			return false
		}
		e := list[0]
		t.releaseLocked(e)
		evicted = append(evicted, e)
		return true
	}
	if t.byPeer[host] >= t.lim.connectionsPerPeer && !evict(host) {
		return nil, evicted, "too many connections from this address"
	}
	if t.total >= t.lim.connections && !evict("") {
		return nil, evicted, "too many connections"
	}
	if len(t.pending[host]) >= t.lim.preAuthPerPeer {
		evict(host)
	}
	if t.pendingTotal >= t.lim.preAuth {
		evict("")
	}
	t.seq++
	tc := &trackedConn{Conn: c, t: t, host: host, addr: c.RemoteAddr().String(), seq: t.seq}
	t.total++
	t.byPeer[host]++
	t.pending[host] = append(t.pending[host], tc)
	t.pendingTotal++
	t.byAddr[tc.addr] = tc
	tc.deadline = time.AfterFunc(t.lim.preAuthDeadline, func() { t.expire(tc) })
	return tc, evicted, ""
}

// largestPendingLocked is the host holding the most pending connections,
// the one whose oldest is older on a tie ("" when none).
func (t *connTracker) largestPendingLocked() string {
	best := ""
	for host, list := range t.pending {
		b := t.pending[best]
		if best == "" || len(list) > len(b) || len(list) == len(b) && list[0].seq < b[0].seq {
			best = host
		}
	}
	return best
}

// authenticated marks the pending connection from addr authenticated: it
// leaves the pending ones, and its deadline is lifted.
func (t *connTracker) authenticated(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.byAddr[addr]
	if c == nil {
		return
	}
	t.unpendLocked(c)
	c.authed = true
	c.deadline.Stop()
}

// expire closes c if it has not authenticated.
func (t *connTracker) expire(c *trackedConn) {
	t.mu.Lock()
	if c.authed || c.released {
		t.mu.Unlock()
		return
	}
	t.releaseLocked(c)
	t.mu.Unlock()
	_ = c.Conn.Close()
	t.sampler.Info(t.log, "Closed a connection that did not authenticate in time", "peer", c.addr,
		"deadline", t.lim.preAuthDeadline.String())
}

// releaseLocked gives c's place back, once.
func (t *connTracker) releaseLocked(c *trackedConn) {
	if c.released {
		return
	}
	c.released = true
	if c.deadline != nil {
		c.deadline.Stop()
	}
	if !c.authed {
		t.unpendLocked(c)
	}
	t.total--
	if t.byPeer[c.host]--; t.byPeer[c.host] <= 0 {
		delete(t.byPeer, c.host)
	}
}

// unpendLocked removes a pending c from the pending connections.
func (t *connTracker) unpendLocked(c *trackedConn) {
	list := t.pending[c.host]
	for i, p := range list {
		if p == c {
			list = append(list[:i], list[i+1:]...)
			t.pendingTotal--
			break
		}
	}
	if len(list) == 0 {
		delete(t.pending, c.host)
	} else {
		t.pending[c.host] = list
	}
	if t.byAddr[c.addr] == c {
		delete(t.byAddr, c.addr)
	}
}

// counts are the connections tracked now: in all, and pending.
func (t *connTracker) counts() (total, pending int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total, t.pendingTotal
}
