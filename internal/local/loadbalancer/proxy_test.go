package loadbalancer

import (
	"io"
	"net"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
)

func TestProxyRoundRobinsAndSkipsRefusingBackends(t *testing.T) {
	a, b := echoName(t, "a"), echoName(t, "b")
	dead := deadAddr(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(ln)
	defer p.Close()
	if got := get(t, ln.Addr().String()); got != "" {
		t.Errorf("no backends: got %q, want a closed connection", got)
	}
	p.SetBackends([]string{a, dead, b})
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, get(t, ln.Addr().String()))
	}
	// a, then dead (refused, so b), then b, then a again.
	if want := []string{"a", "b", "b", "a"}; !equal(got, want) {
		t.Errorf("responses = %v, want %v", got, want)
	}
}

func TestProxyCloseEndsOpenConnections(t *testing.T) {
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	go func() {
		for {
			c, err := hold.Accept()
			if err != nil {
				return
			}
			defer c.Close() // never answers
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(ln)
	p.SetBackends([]string{hold.Addr().String()})
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(50 * time.Millisecond)
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("close hangs on an open connection")
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("client connection still open after close")
	}
}

func TestReadyBackendsFollowsPortNamesAndReadiness(t *testing.T) {
	yes, no := true, false
	http, other := "http", "other"
	port := func(n int32) *int32 { return &n }
	slices := []*discoveryv1.EndpointSlice{{
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &http, Port: port(3000)}, {Name: &other, Port: port(9)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
			{Addresses: []string{"10.244.0.2"}},
			{Addresses: []string{"10.244.0.4"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
		},
	}}
	got := readyBackends(slices, "http", false)
	if want := []string{"10.244.0.2:3000", "10.244.0.3:3000"}; !equal(got, want) {
		t.Errorf("backends = %v, want %v", got, want)
	}
	if got := readyBackends(slices, "missing", false); len(got) != 0 {
		t.Errorf("unknown port name: %v", got)
	}
	if got := readyBackends(slices, "http", true); len(got) != 0 {
		t.Errorf("a TCP port's endpoints serve a UDP port: %v", got)
	}
}

func echoName(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, name)
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func get(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b, _ := io.ReadAll(c)
	return string(b)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
