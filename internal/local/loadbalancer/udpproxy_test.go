package loadbalancer

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// udpEchoServer answers every datagram with its name and the datagram.
func udpEchoServer(t *testing.T, name string) string {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = conn.WriteToUDP([]byte(name+":"+string(buf[:n])), from)
		}
	}()
	return conn.LocalAddr().String()
}

func startUDPProxy(t *testing.T, backends ...string) (*UDPProxy, string) {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := NewUDPProxy(conn)
	p.SetBackends(backends)
	return p, conn.LocalAddr().String()
}

func exchange(addr, msg string) (string, error) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

func TestUDPProxySharesSessionsAndAnswers(t *testing.T) {
	p, addr := startUDPProxy(t, udpEchoServer(t, "a"), udpEchoServer(t, "b"))
	defer p.Close()
	seen := map[string]int{}
	for i := range 10 {
		msg := fmt.Sprintf("m%d", i)
		got, err := exchange(addr, msg)
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		seen[got[:1]]++
		if got[2:] != msg {
			t.Fatalf("answer %q to %q", got, msg)
		}
	}
	if seen["a"] != 5 || seen["b"] != 5 {
		t.Errorf("sessions by backend %v: want 5 each (round-robin over new clients)", seen)
	}
}

func TestUDPProxyKeepsAClientOnOneBackend(t *testing.T) {
	p, addr := startUDPProxy(t, udpEchoServer(t, "a"), udpEchoServer(t, "b"))
	defer p.Close()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := ""
	for i := range 5 {
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = string(buf[:1])
		} else if string(buf[:1]) != first {
			t.Fatalf("datagram %d of one client reached %s, the first %s", i, buf[:1], first)
		}
	}
}

func TestUDPProxyWithoutBackendsDropsAndCloses(t *testing.T) {
	p, addr := startUDPProxy(t)
	if _, err := exchange(addr, "x"); err == nil {
		t.Error("an answer without backends")
	}
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("close hangs")
	}
}
