package podnet

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testOptions keep the test's network apart from a running local node.
func testOptions(t *testing.T) Options {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("podnet tests need root (network namespaces)")
	}
	return Options{Prefix: "gwlpt", CIDR: "10.251.0.0/24", LockDir: t.TempDir()}
}

func TestPodsReachEachOtherTheNodeAndTheHost(t *testing.T) {
	ctx := context.Background()
	n, err := Setup(ctx, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { assertNoLeftovers(t, n.Teardown(ctx)) })

	a, err := n.AddPod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.AddPod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.IP != netip.MustParseAddr("10.251.0.2") || b.IP != netip.MustParseAddr("10.251.0.3") {
		t.Fatalf("pod IPs = %s, %s; want the lowest free addresses after the node's", a.IP, b.IP)
	}
	if n.NodeIP() != netip.MustParseAddr("10.251.0.1") || n.HostIP() != netip.MustParseAddr("10.251.0.254") {
		t.Fatalf("node IP %s, host IP %s", n.NodeIP(), n.HostIP())
	}

	serveName(t, b.Do, b.IP.String()+":8080", "pod-b")
	serveName(t, n.InNode, n.NodeIP().String()+":8081", "node")

	if got := dialFrom(t, a.Do, b.IP.String()+":8080"); got != "pod-b from 10.251.0.2" {
		t.Errorf("pod a -> pod b: %q", got)
	}
	if got := dialFrom(t, hostDo, b.IP.String()+":8080"); got != "pod-b from 10.251.0.254" {
		t.Errorf("host -> pod b: %q", got)
	}
	if got := dialFrom(t, a.Do, n.NodeIP().String()+":8081"); got != "node from 10.251.0.2" {
		t.Errorf("pod a -> node: %q", got)
	}
	if got := dialFrom(t, hostDo, n.NodeIP().String()+":8081"); got != "node from 10.251.0.254" {
		t.Errorf("host -> node: %q", got)
	}

	if err := n.RemovePod(ctx, a); err != nil {
		t.Fatal(err)
	}
	c, err := n.AddPod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.IP != a.IP {
		t.Errorf("freed IP %s not reused; got %s", a.IP, c.IP)
	}
}

func TestSetupRemovesLeftoversOfACrashedRun(t *testing.T) {
	ctx := context.Background()
	opts := testOptions(t)
	crashed, err := Setup(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.AddPod(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(ctx, opts); err == nil || !strings.Contains(err.Error(), "another local node") {
		t.Fatalf("second network with the same prefix while the first runs: err = %v", err)
	}
	// A crash releases the lock but leaves namespaces, links and the route.
	crashed.releaseLock()

	n, err := Setup(ctx, opts)
	if err != nil {
		t.Fatalf("setup over leftovers: %v", err)
	}
	if got := namespaces(t, "gwlpt-"); len(got) != 1 || got[0] != "gwlpt-node" {
		t.Errorf("namespaces after setup over leftovers = %v, want only gwlpt-node", got)
	}
	assertNoLeftovers(t, n.Teardown(ctx))
}

func TestOptionsAreValidated(t *testing.T) {
	for _, o := range []Options{
		{Prefix: "Bad_Prefix"}, {Prefix: "waytoolongprefix"},
		{CIDR: "10.244.0.1/16"}, {CIDR: "fd00::/64"}, {CIDR: "10.0.0.0/30"},
	} {
		if _, err := Setup(context.Background(), o); err == nil {
			t.Errorf("Setup(%+v) succeeded", o)
		}
	}
}

func hostDo(fn func() error) error { return fn() }

func serveName(t *testing.T, in func(func() error) error, addr, name string) {
	t.Helper()
	var l net.Listener
	if err := in(func() (err error) { l, err = net.Listen("tcp", addr); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			_, _ = io.WriteString(c, name+" from "+host)
			c.Close()
		}
	}()
}

func dialFrom(t *testing.T, in func(func() error) error, addr string) string {
	t.Helper()
	var c net.Conn
	if err := in(func() (err error) { c, err = net.DialTimeout("tcp", addr, 2*time.Second); return err }); err != nil {
		t.Errorf("dial %s: %v", addr, err)
		return ""
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b, _ := io.ReadAll(c)
	return string(b)
}

func namespaces(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], prefix) {
			got = append(got, f[0])
		}
	}
	return got
}

func assertNoLeftovers(t *testing.T, teardownErr error) {
	t.Helper()
	if teardownErr != nil {
		t.Errorf("teardown: %v", teardownErr)
	}
	if got := namespaces(t, "gwlpt-"); len(got) != 0 {
		t.Errorf("namespaces left: %v", got)
	}
	if _, err := os.Stat("/sys/class/net/gwlpt-up"); err == nil {
		t.Error("uplink gwlpt-up left on the host")
	}
	if out, _ := exec.Command("ip", "route", "show", "10.251.0.0/24").Output(); len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("host route left: %s", out)
	}
}

// Two local nodes whose pod CIDRs overlap would steal each other's pods'
// traffic (the more specific host route wins): the second one is refused.
func TestSetupRefusesAnOverlappingCIDR(t *testing.T) {
	ctx := context.Background()
	first := testOptions(t)
	n, err := Setup(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { assertNoLeftovers(t, n.Teardown(ctx)) })
	for _, cidr := range []string{"10.251.0.0/16", "10.251.0.128/25"} {
		other := Options{Prefix: "gwlpo", CIDR: cidr, LockDir: t.TempDir()}
		o, err := Setup(ctx, other)
		if err == nil {
			_ = o.Teardown(ctx)
			t.Fatalf("a second node with pod CIDR %s beside %s was set up", cidr, first.CIDR)
		}
		if !strings.Contains(err.Error(), "overlaps the host route") || !strings.Contains(err.Error(), "10.251.0.0/24") {
			t.Errorf("CIDR %s: err = %v, want it to name the overlapping route", cidr, err)
		}
	}
}

func TestOverlappingRoute(t *testing.T) {
	routes := "default via 192.168.1.1 dev eth0\n10.246.0.0/16 via 10.246.0.1 dev gwle-up onlink src 10.246.255.254\n192.168.1.0/24 dev eth0 proto kernel scope link src 192.168.1.5\n10.9.9.9 dev tun0\n"
	for cidr, want := range map[string]string{
		"10.246.0.0/24": "10.246.0.0/16 via 10.246.0.1 dev gwle-up onlink src 10.246.255.254",
		"10.0.0.0/8":    "10.246.0.0/16 via 10.246.0.1 dev gwle-up onlink src 10.246.255.254",
		"10.9.9.0/24":   "10.9.9.9 dev tun0",
		"10.247.0.0/16": "",
		"172.16.0.0/12": "",
	} {
		got, ok := overlappingRoute(routes, netip.MustParsePrefix(cidr))
		if got != want || ok != (want != "") {
			t.Errorf("%s: got %q, %v; want %q", cidr, got, ok, want)
		}
	}
}
