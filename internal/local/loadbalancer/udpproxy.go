package loadbalancer

import (
	"errors"
	"net"
	"slices"
	"sync"
	"time"
)

// udpSessionIdle ends a client's session after this long without a datagram
// either way.
const udpSessionIdle = 30 * time.Second

// UDPProxy forwards the datagrams received on one UDP socket to the current
// backends: each client (address and port) gets a session, a socket of its
// own toward one backend (round-robin over sessions), whose answers go back
// to the client from the proxy's address, as a cloud load balancer's
// would.
type UDPProxy struct {
	conn *net.UDPConn

	mu       sync.Mutex
	backends []string
	next     int
	sessions map[string]*udpSession
	closed   bool
	wg       sync.WaitGroup
}

type udpSession struct {
	upstream *net.UDPConn
	last     time.Time
}

// NewUDPProxy serves conn until Close; it has no backends until SetBackends.
func NewUDPProxy(conn *net.UDPConn) *UDPProxy {
	p := &UDPProxy{conn: conn, sessions: map[string]*udpSession{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

// SetBackends replaces the backends ("ip:port"); sessions stay with theirs.
func (p *UDPProxy) SetBackends(b []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Equal(p.backends, b) {
		p.backends, p.next = b, 0
	}
}

func (p *UDPProxy) serve() {
	defer p.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, client, err := p.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		s := p.session(client)
		if s == nil {
			continue // no ready endpoint: the datagram is dropped
		}
		_, _ = s.upstream.Write(buf[:n])
	}
}

// session returns the client's session, starting one (and its reader) if
// it has none; nil when no backend is ready or the proxy is closed.
func (p *UDPProxy) session(client *net.UDPAddr) *udpSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := client.String()
	if s := p.sessions[key]; s != nil {
		s.last = time.Now()
		return s
	}
	if p.closed || len(p.backends) == 0 {
		return nil
	}
	addr := p.backends[p.next%len(p.backends)]
	p.next = (p.next + 1) % len(p.backends)
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil
	}
	up, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return nil
	}
	s := &udpSession{upstream: up, last: time.Now()}
	p.sessions[key] = s
	p.wg.Add(1)
	go p.answer(key, client, s)
	return s
}

// answer passes a session's answers back to its client until the session
// is idle for udpSessionIdle or the proxy closes.
func (p *UDPProxy) answer(key string, client *net.UDPAddr, s *udpSession) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		if p.sessions[key] == s {
			delete(p.sessions, key)
		}
		p.mu.Unlock()
		_ = s.upstream.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		_ = s.upstream.SetReadDeadline(time.Now().Add(time.Second))
		n, err := s.upstream.Read(buf)
		if err == nil {
			p.mu.Lock()
			s.last = time.Now()
			p.mu.Unlock()
			_, _ = p.conn.WriteToUDP(buf[:n], client)
			continue
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return // closed, or the backend refused (ICMP): a new datagram starts a new session
		}
		p.mu.Lock()
		idle, closed := time.Since(s.last) > udpSessionIdle, p.closed
		p.mu.Unlock()
		if idle || closed {
			return
		}
	}
}

// Close stops reading, ends every session and waits.
func (p *UDPProxy) Close() {
	p.mu.Lock()
	p.closed = true
	_ = p.conn.Close()
	for _, s := range p.sessions {
		_ = s.upstream.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
