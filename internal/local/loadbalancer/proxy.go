package loadbalancer

import (
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// Proxy forwards the connections accepted on one listener to the current
// backends, round-robin, skipping backends that refuse; with a PROXY
// protocol version set, each backend connection opens with the client's
// address in a PROXY header.
type Proxy struct {
	ln net.Listener

	mu       sync.Mutex
	backends []string
	next     int
	header   ProxyProtocol
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup

	dial func(network, addr string) (net.Conn, error)
}

// NewProxy serves ln until Close; it has no backends until SetBackends.
func NewProxy(ln net.Listener) *Proxy {
	return NewProxyDialing(ln, func(network, addr string) (net.Conn, error) {
		return net.DialTimeout(network, addr, 2*time.Second)
	})
}

// NewProxyDialing is NewProxy connecting to backends with dial: a
// benchmark's proxy reaches an NGINX in another network namespace.
func NewProxyDialing(ln net.Listener, dial func(network, addr string) (net.Conn, error)) *Proxy {
	p := &Proxy{ln: ln, conns: map[net.Conn]struct{}{}, dial: dial}
	p.wg.Add(1)
	go p.serve()
	return p
}

// SetBackends replaces the backends ("ip:port"); open connections stay.
func (p *Proxy) SetBackends(b []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Equal(p.backends, b) {
		p.backends, p.next = b, 0
	}
}

// SetProxyProtocol sets the PROXY protocol version of the connections
// accepted from now on (ProxyProtocolNone: no header).
func (p *Proxy) SetProxyProtocol(v ProxyProtocol) {
	p.mu.Lock()
	p.header = v
	p.mu.Unlock()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// pick returns the backends in the order to try for one connection, and
// the PROXY protocol version to open it with.
func (p *Proxy) pick() ([]string, ProxyProtocol) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.backends)
	order := make([]string, 0, n)
	for i := 0; i < n; i++ {
		order = append(order, p.backends[(p.next+i)%n])
	}
	if n > 0 {
		p.next = (p.next + 1) % n
	}
	return order, p.header
}

func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	var backend net.Conn
	order, version := p.pick()
	for _, addr := range order {
		c, err := p.dial("tcp", addr)
		if err == nil {
			backend = c
			break
		}
	}
	if backend == nil {
		return // no ready endpoint: the client sees the connection close
	}
	if !p.track(backend) {
		backend.Close()
		return
	}
	defer p.untrack(backend)
	// The header goes before any of the client's bytes: the backend reads
	// it first, then the client's stream as it came.
	if h := proxyHeader(version, client.RemoteAddr(), client.LocalAddr()); h != nil {
		if _, err := backend.Write(h); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close so that request/response protocols see the end.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(backend, client)
	go pipe(client, backend)
	<-done
	<-done
}

// Close stops accepting, closes every connection and waits.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
