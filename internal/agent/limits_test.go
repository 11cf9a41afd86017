package agent

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
)

// handshake opens a TLS connection from the loopback address from, or
// returns why it failed.
func (h *gateHarness) handshake(from string) (*tls.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	// The server's certificate is the test's own: see dial.
	return tls.DialWithDialer(d, "tcp", h.addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13, NextProtos: []string{"h2"}})
}

// TestConnectionLimits: connections beyond the limit from one address, or
// in all, are closed before their handshake; a closed connection frees its
// place.
func TestConnectionLimits(t *testing.T) {
	lim := generousLimits()
	lim.connections, lim.connectionsPerPeer = 3, 2
	lim.handshake = time.Minute // the test's connections never send HTTP/2's preface
	h := startGate(t, newCountingAuth(), lim)
	open := func(from string) *tls.Conn {
		t.Helper()
		c, err := h.handshake(from)
		if err != nil {
			t.Fatalf("a connection from %s within the limits: %v", from, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	refused := func(from, why string) {
		t.Helper()
		if c, err := h.handshake(from); err == nil {
			_ = c.Close()
			t.Fatalf("a connection from %s was accepted beyond the limits (%s)", from, why)
		}
	}
	first := open("127.0.0.2")
	open("127.0.0.2")
	refused("127.0.0.2", "per peer")
	open("127.0.0.3")
	refused("127.0.0.4", "in all")

	_ = first.Close()
	waitUntil(t, func() bool {
		c, err := h.handshake("127.0.0.2")
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
