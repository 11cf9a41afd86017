package agent

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

// handshake opens a TLS connection from the loopback address from, or
// returns why it failed.
func (h *gateHarness) handshake(from string) (*tls.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	// The server's certificate is the test's own: see dial.
	return tls.DialWithDialer(d, "tcp", h.addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}})
}

// open is a TLS connection from from that never sends an RPC, closed when
// the test ends.
func (h *gateHarness) open(from string) *tls.Conn {
	h.t.Helper()
	c, err := h.handshake(from)
	if err != nil {
		h.t.Fatalf("a connection from %s: %v", from, err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	return c
}

// refused fails the test if a connection from from is accepted.
func (h *gateHarness) refused(from, why string) {
	h.t.Helper()
	if c, err := h.handshake(from); err == nil {
		// A refused connection is closed before its handshake; one let in
		// completes it.
		_ = c.Close()
		h.t.Fatalf("a connection from %s was accepted beyond the limits (%s)", from, why)
	}
}

// dialCounting is dial from from, counting the connections the client
// opens: a client whose connection the server closes opens another at its
// next RPC.
func (h *gateHarness) dialCounting(from string) (*grpc.ClientConn, *atomic.Int32) {
	h.t.Helper()
	dials := new(atomic.Int32)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(creds),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = conn.Close() })
	return conn, dials
}

// closedByServer fails the test unless the server closes c (it reads what
// the server sent, its HTTP/2 settings, until the connection ends).
func closedByServer(t *testing.T, c *tls.Conn, what string) {
	t.Helper()
	// Generous: the test asserts that the server closes it, not how fast.
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	for {
		_, err := c.Read(buf)
		if err == nil {
			continue
		}
		if errorIsTimeout(err) {
			t.Fatalf("%s is still open", what)
		}
		return
	}
}

// counts are the connections the server tracks: in all, and not
// authenticated yet.
func (h *gateHarness) counts() (total, pending int) {
	return h.srv.gate.conns.Load().counts()
}

// TestConnectionLimits: connections beyond the limit from one address, or
// in all, are closed before their handshake when every place is held by an
// authenticated connection; a closed connection frees its place.
func TestConnectionLimits(t *testing.T) {
	lim := generousLimits()
	lim.connections, lim.connectionsPerPeer = 3, 2
	h := startGate(t, newCountingAuth("good", "other@127.0.0.3"), lim)
	agent := func(from string) *grpc.ClientConn {
		t.Helper()
		conn := h.dial(from)
		token := "good"
		if from != "127.0.0.1" {
			token = "other@" + from
		}
		if err := health(t, conn, token); err != nil {
			t.Fatalf("an agent from %s within the limits: %v", from, err)
		}
		return conn
	}
	first := agent("127.0.0.1")
	agent("127.0.0.1")
	h.refused("127.0.0.1", "per peer")
	agent("127.0.0.3")
	h.refused("127.0.0.4", "in all")

	_ = first.Close()
	waitUntil(t, func() bool {
		c, err := h.handshake("127.0.0.1")
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
		return err == nil
	})
	logs := h.logs.String()
	for _, want := range []string{"too many connections from this address", `"reason"="too many connections"`} {
		if !strings.Contains(logs, want) {
			t.Fatalf("the log does not say %q:\n%s", want, logs)
		}
	}
}

// TestPendingConnectionsMakeRoom: peers that complete the TLS handshake
// and never authenticate cannot hold the places agents need. When every
// place is taken, a new connection closes the oldest not-yet-authenticated
// connection of the address holding the most; an authenticated connection
// is never closed for another. (Before, a new agent was refused until the
// idle timeout, 2 minutes, closed a squatter: and a squatter that keeps
// sending refused RPCs is never idle.)
func TestPendingConnectionsMakeRoom(t *testing.T) {
	lim := generousLimits()
	lim.connections, lim.connectionsPerPeer = 3, 2
	lim.preAuth, lim.preAuthPerPeer = 3, 2
	lim.handshake = time.Minute // the squatters never send HTTP/2's preface
	h := startGate(t, newCountingAuth("good"), lim)

	a1, a2 := h.open("127.0.0.2"), h.open("127.0.0.2")
	a3 := h.open("127.0.0.2") // beyond the address's 2: a1 makes room
	closedByServer(t, a1, "the address's oldest squatter")
	h.open("127.0.0.3") // every place is taken now
	if total, pending := h.counts(); total != 3 || pending != 3 {
		t.Fatalf("%d connections, %d pending; want 3 and 3", total, pending)
	}

	// A new agent gets in: 127.0.0.2 holds the most, its oldest goes.
	conn, dials := h.dialCounting("127.0.0.1")
	if err := health(t, conn, "good"); err != nil {
		t.Fatalf("a new agent while squatters hold every place: %v", err)
	}
	closedByServer(t, a2, "the oldest squatter of the address holding the most")
	if total, pending := h.counts(); total != 3 || pending != 2 {
		t.Fatalf("%d connections, %d pending; want 3 and 2 (the agent's is authenticated)", total, pending)
	}

	// More squatters take the others' places, never the agent's.
	for _, from := range []string{"127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.4"} {
		h.open(from)
	}
	closedByServer(t, a3, "a squatter, when more came")
	if err := health(t, conn, "good"); err != nil || dials.Load() != 1 {
		t.Fatalf("the agent after the squatters: %v, %d connections opened (want its first, still open)", err, dials.Load())
	}
	if total, pending := h.counts(); total != 3 || pending != 2 {
		t.Fatalf("%d connections, %d pending; want 3 and 2", total, pending)
	}
	// Once every place is an authenticated connection's, a new one is
	// refused (TestConnectionLimits).
	if !strings.Contains(h.logs.String(), "Closed a connection that had not authenticated, for a new one") {
		t.Fatalf("the log does not say that squatters were closed:\n%s", h.logs)
	}
}

// TestPendingConnectionDeadline: a connection that has not authenticated
// within the deadline is closed, also one that keeps sending RPCs it is
// refused (which the idle timeout never closes); an authenticated one
// stays.
func TestPendingConnectionDeadline(t *testing.T) {
	lim := generousLimits()
	lim.preAuthDeadline = 300 * time.Millisecond
	lim.handshake = time.Minute
	h := startGate(t, newCountingAuth("good"), lim)

	closedByServer(t, h.open("127.0.0.2"), "a connection that never sent an RPC")

	refusedConn, refusedDials := h.dialCounting("127.0.0.3")
	agent, agentDials := h.dialCounting("127.0.0.1")
	if err := health(t, agent, "good"); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(4 * lim.preAuthDeadline); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		err := health(t, refusedConn, "bad")
		if err == nil || !strings.Contains(err.Error(), "unknown token") && !isUnavailable(err) {
			t.Fatalf("a refused token: %v", err)
		}
	}
	if n := refusedDials.Load(); n < 2 {
		t.Fatalf("the connection sending refused RPCs was never closed (%d opened)", n)
	}
	if err := health(t, agent, "good"); err != nil || agentDials.Load() != 1 {
		t.Fatalf("the authenticated connection after the deadline: %v, %d connections opened (want its first, still open)", err, agentDials.Load())
	}
	if !strings.Contains(h.logs.String(), "Closed a connection that did not authenticate in time") {
		t.Fatalf("the log does not say so:\n%s", h.logs)
	}
}

// isUnavailable: an RPC that raced its connection's closing.
func isUnavailable(err error) bool { return status.Code(err) == codes.Unavailable }

// TestStalledHandshakeIsClosed: a peer that connects and never completes
// its TLS handshake is closed after the handshake timeout.
func TestStalledHandshakeIsClosed(t *testing.T) {
	lim := generousLimits()
	lim.handshake = 100 * time.Millisecond
	h := startGate(t, newCountingAuth(), lim)
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Generous: the test asserts that the server closes it, not how fast.
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil || errorIsTimeout(err) {
		t.Fatalf("a connection without a handshake is still open: %v", err)
	}
}

func errorIsTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestIdleConnectionIsClosed: a connection without a stream is closed after
// the idle limit (an agent always keeps its Subscribe stream open).
func TestIdleConnectionIsClosed(t *testing.T) {
	lim := generousLimits()
	lim.idle = 100 * time.Millisecond
	h := startGate(t, newCountingAuth(), lim)
	conn := h.dial("")
	wantStatus(t, "a refused RPC", health(t, conn, "bad"), codes.Unauthenticated, "unknown token")
	waitUntil(t, func() bool { return conn.GetState() == connectivity.Idle })
}
