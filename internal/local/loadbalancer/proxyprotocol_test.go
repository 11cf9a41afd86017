package loadbalancer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recorder is a backend that keeps the first bytes of each connection it
// accepts: the header the proxy sent, then what the client sent.
type recorder struct {
	addr string
	got  chan []byte
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &recorder{addr: ln.Addr().String(), got: make(chan []byte, 8)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				b, _ := io.ReadAll(c) // the client half-closes: the proxy passes the end on
				r.got <- b
			}()
		}
	}()
	return r
}

// sendFrom connects to addr from the loopback address src, writes msg,
// half-closes and returns the connection's two ends as the proxy sees
// them.
func sendFrom(t *testing.T, src, addr, msg string) (client, proxy netip.AddrPort) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.ReadAll(c)
	return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

func (r *recorder) next(t *testing.T) []byte {
	t.Helper()
	select {
	case b := <-r.got:
		return b
	case <-time.After(5 * time.Second):
		t.Fatal("the backend received no connection")
		return nil
	}
}

// A client at 127.0.0.77 reaches the backend through the proxy: with v1
// the backend reads the text header naming the client's address and port
// and the proxy's, then the client's bytes unchanged; with v2 the binary
// header; with none, only the client's bytes. The version applies to the
// connections accepted after it is set.
func TestProxySendsTheClientsAddressInAProxyHeader(t *testing.T) {
	backend := newRecorder(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(ln)
	defer p.Close()
	p.SetBackends([]string{backend.addr})
	const msg = "GET / HTTP/1.0\r\n\r\n"

	sendFrom(t, "127.0.0.77", ln.Addr().String(), msg)
	if got := string(backend.next(t)); got != msg {
		t.Errorf("no version set: the backend read %q, want the client's bytes alone", got)
	}

	p.SetProxyProtocol(ProxyProtocolV1)
	client, proxy := sendFrom(t, "127.0.0.77", ln.Addr().String(), msg)
	want := fmt.Sprintf("PROXY TCP4 127.0.0.77 127.0.0.1 %d %d\r\n%s", client.Port(), proxy.Port(), msg)
	if got := string(backend.next(t)); got != want {
		t.Errorf("v1: the backend read %q, want %q", got, want)
	}

	p.SetProxyProtocol(ProxyProtocolV2)
	client, proxy = sendFrom(t, "127.0.0.78", ln.Addr().String(), msg)
	got := backend.next(t)
	src, dst, rest, err := parseV2(got)
	if err != nil {
		t.Fatalf("v2: %v in %q", err, got)
	}
	if src != client || dst != proxy || string(rest) != msg {
		t.Errorf("v2: header from %v to %v then %q; want from %v to %v then %q", src, dst, rest, client, proxy, msg)
	}
}

// parseV2 reads a version 2 PROXY command for TCP over IPv4 or IPv6 the
// way a receiver does (HAProxy's specification, section 2.2).
func parseV2(b []byte) (src, dst netip.AddrPort, rest []byte, err error) {
	if !bytes.HasPrefix(b, []byte("\x0D\x0A\x0D\x0A\x00\x0D\x0A\x51\x55\x49\x54\x0A")) || len(b) < 16 {
		return src, dst, nil, fmt.Errorf("no v2 signature")
	}
	if b[12] != 0x21 {
		return src, dst, nil, fmt.Errorf("version and command %#x, want 0x21 (v2, PROXY)", b[12])
	}
	n := int(binary.BigEndian.Uint16(b[14:16]))
	body := b[16:]
	if len(body) < n {
		return src, dst, nil, fmt.Errorf("length %d beyond the %d bytes read", n, len(body))
	}
	size := map[byte]int{0x11: 4, 0x21: 16}[b[13]]
	if size == 0 || n != 2*size+4 {
		return src, dst, nil, fmt.Errorf("family %#x with length %d", b[13], n)
	}
	s, _ := netip.AddrFromSlice(body[:size])
	d, _ := netip.AddrFromSlice(body[size : 2*size])
	sp := binary.BigEndian.Uint16(body[2*size:])
	dp := binary.BigEndian.Uint16(body[2*size+2:])
	return netip.AddrPortFrom(s, sp), netip.AddrPortFrom(d, dp), body[n:], nil
}

func TestProxyHeader(t *testing.T) {
	tcp := func(s string) net.Addr { return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)) }
	v2 := func(fam byte, rest ...byte) []byte {
		return append(append([]byte("\r\n\r\n\x00\r\nQUIT\n"), 0x21, fam), rest...)
	}
	for _, tc := range []struct {
		name          string
		version       ProxyProtocol
		client, local net.Addr
		want          []byte
	}{
		{"none", ProxyProtocolNone, tcp("10.0.0.1:1234"), tcp("127.0.1.1:80"), nil},
		{"v1 IPv4", ProxyProtocolV1, tcp("10.0.0.1:1234"), tcp("127.0.1.1:80"), []byte("PROXY TCP4 10.0.0.1 127.0.1.1 1234 80\r\n")},
		{"v1 IPv6", ProxyProtocolV1, tcp("[2001:db8::1]:1234"), tcp("[::1]:443"), []byte("PROXY TCP6 2001:db8::1 ::1 1234 443\r\n")},
		{"v1 an IPv4 client of a dual-stack socket", ProxyProtocolV1, tcp("[::ffff:10.0.0.1]:1234"), tcp("[::ffff:127.0.1.1]:80"), []byte("PROXY TCP4 10.0.0.1 127.0.1.1 1234 80\r\n")},
		{"v1 two families", ProxyProtocolV1, tcp("10.0.0.1:1234"), tcp("[::1]:80"), []byte("PROXY UNKNOWN\r\n")},
		{"v1 not TCP", ProxyProtocolV1, &net.UnixAddr{Name: "@x", Net: "unix"}, tcp("127.0.1.1:80"), []byte("PROXY UNKNOWN\r\n")},
		{"v2 IPv4", ProxyProtocolV2, tcp("10.0.0.1:1234"), tcp("127.0.1.1:80"),
			v2(0x11, 0, 12, 10, 0, 0, 1, 127, 0, 1, 1, 0x04, 0xd2, 0, 80)},
		{"v2 IPv6", ProxyProtocolV2, tcp("[2001:db8::1]:1234"), tcp("[::1]:443"),
			v2(0x21, 0, 36, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x04, 0xd2, 0x01, 0xbb)},
		{"v2 two families", ProxyProtocolV2, tcp("10.0.0.1:1234"), tcp("[::1]:80"), []byte("\r\n\r\n\x00\r\nQUIT\n\x20\x00\x00\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := proxyHeader(tc.version, tc.client, tc.local); !bytes.Equal(got, tc.want) {
				t.Errorf("header %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProxyProtocolOf(t *testing.T) {
	svc := func(annotations map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        ProxyProtocol
		wantErr     bool
	}{
		{"no annotation", nil, ProxyProtocolNone, false},
		{"v1", map[string]string{ProxyProtocolAnnotation: "v1"}, ProxyProtocolV1, false},
		{"v2", map[string]string{ProxyProtocolAnnotation: "v2"}, ProxyProtocolV2, false},
		{"AWS's value is not this annotation's", map[string]string{ProxyProtocolAnnotation: "*"}, ProxyProtocolNone, true},
		{"empty", map[string]string{ProxyProtocolAnnotation: ""}, ProxyProtocolNone, true},
		{"another load balancer's annotation", map[string]string{"service.beta.kubernetes.io/aws-load-balancer-proxy-protocol": "*"}, ProxyProtocolNone, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := proxyProtocolOf(svc(tc.annotations))
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("proxyProtocolOf = %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// The proxy's header and the client's first bytes arrive as one stream:
// a backend reading the header line by line finds the client's request
// right after it (nothing lost, nothing reordered, with a larger request).
func TestProxyHeaderThenClientStream(t *testing.T) {
	backend := newRecorder(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(ln)
	defer p.Close()
	p.SetBackends([]string{backend.addr})
	p.SetProxyProtocol(ProxyProtocolV1)
	msg := "POST / HTTP/1.1\r\nContent-Length: 65536\r\n\r\n" + string(bytes.Repeat([]byte("x"), 65536))
	sendFrom(t, "127.0.0.1", ln.Addr().String(), msg)
	r := bufio.NewReader(bytes.NewReader(backend.next(t)))
	line, err := r.ReadString('\n')
	if err != nil || len(line) < 6 || line[:6] != "PROXY " {
		t.Fatalf("first line %q (%v), want the PROXY header", line, err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != msg {
		t.Errorf("after the header: %d bytes, want the client's %d unchanged", len(rest), len(msg))
	}
}
