package endpoints

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestAddress: the one check of every address the data plane connects to
// refuses what would reach the pod itself or its node, mapped or not.
func TestAddress(t *testing.T) {
	for s, want := range map[string]string{
		"10.0.0.1": "10.0.0.1", "203.0.113.7": "203.0.113.7", "fd00::1": "fd00::1",
		"::ffff:10.0.0.1": "10.0.0.1", // the kernel connects to 10.0.0.1
	} {
		got, err := Address(netip.MustParseAddr(s))
		if err != nil || got.String() != want {
			t.Errorf("%s: got %v %v, want %s", s, got, err, want)
		}
	}
	for _, s := range []string{
		"127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "::", "169.254.169.254", "fe80::1", "224.0.0.1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:0.0.0.0", "::ffff:169.254.169.254", "fe80::1%eth0",
	} {
		if got, err := Address(netip.MustParseAddr(s)); err == nil {
			t.Errorf("%s: accepted as %s", s, got)
		}
	}
}

func TestSplitName(t *testing.T) {
	for _, ok := range []string{"httpbin.org:80", "a:1", "my-svc.other.svc.cluster.local:65535", "xn--bcher-kva.example:443", "1.2.3:80", strings.Repeat("a", 63) + ".b:80"} {
		if _, _, err := SplitName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"httpbin.org", "httpbin.org:0", "httpbin.org:65536", "httpbin.org:080", "httpbin.org:http", "HTTPBIN.org:80",
		"httpbin.org.:80", ".httpbin.org:80", "-a.org:80", "a-.org:80", "a..org:80", "a_b.org:80", "10.0.0.1:80",
		"a.org:80:80", `a");os.exit()--:80`, strings.Repeat("a", 64) + ".b:80", strings.Repeat("a.", 127) + "aa:80", ":80",
	} {
		if name, port, err := SplitName(bad); err == nil {
			t.Errorf("%q: accepted as %s port %d", bad, name, port)
		}
	}
}

func TestResolverBounds(t *testing.T) {
	var r Resolver
	if r.Timeout() != DefaultTimeout || r.Refresh(0) != MinRefresh || r.Refresh(30*time.Second) != 30*time.Second || r.Refresh(48*time.Hour) != MaxRefresh {
		t.Errorf("defaults: timeout %s, refresh %s %s %s", r.Timeout(), r.Refresh(0), r.Refresh(30*time.Second), r.Refresh(48*time.Hour))
	}
	r = Resolver{TimeoutMillis: 1, CacheTTLMillis: 60000}
	if r.Timeout() != MinTimeout || r.Refresh(time.Second) != time.Minute || r.Refresh(time.Hour) != time.Minute {
		t.Errorf("cacheTTL 60s: timeout %s, refresh %s", r.Timeout(), r.Refresh(time.Second))
	}
	if (Resolver{TimeoutMillis: 3600000}).Timeout() != MaxTimeout {
		t.Error("a timeout of an hour is not bounded")
	}
	if err := (Resolver{Servers: []string{"10.0.0.10:53", "[fd00::53]:53", "dns.google:53"}}).Check(); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"10.0.0.10", "dns.google", "dns google:53", "10.0.0.10:53; x"} {
		if err := (Resolver{Servers: []string{s}}).Check(); err == nil {
			t.Errorf("server %q accepted", s)
		}
	}
}

// TestCheckNames: names count as MaxAnswersPerName endpoints of their
// upstream, and are checked as names; an endpoint the address check
// refuses is refused by the client as by the manager.
func TestCheckNames(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	fits := make([]string, MaxEndpointsPerUpstream/MaxAnswersPerName)
	for i := range fits {
		fits[i] = JoinName("n"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+".example", 443)
	}
	u := Update{Set: Set{id: {Names: fits}}}
	if refused, err := u.Check(); err != nil || len(refused) > 0 {
		t.Fatalf("%d names: %v %v", len(fits), refused, err)
	}
	u.Set[id] = Upstream{Names: fits, Endpoints: make([]string, MaxEndpointsPerUpstream%MaxAnswersPerName+1)}
	if refused, _ := u.Check(); !strings.Contains(refused[id], "over the 1000") {
		t.Errorf("names and endpoints past the bound: %v", refused)
	}
	for name, up := range map[string]Upstream{
		"a loopback endpoint":   {Endpoints: []string{"127.0.0.1:80"}},
		"a metadata endpoint":   {Endpoints: []string{"169.254.169.254:80"}},
		"an upper-case name":    {Names: []string{"Example.com:80"}},
		"a name without port":   {Names: []string{"example.com"}},
		"an IP address as name": {Names: []string{"127.0.0.1:80"}},
	} {
		refused, err := (Update{Set: Set{id: up}}).Check()
		if err != nil || refused[id] == "" {
			t.Errorf("%s: refused %v, error %v; want the upstream refused", name, refused, err)
		}
	}
	if _, err := (Update{Resolver: &Resolver{Servers: []string{"not a server"}}}).Check(); err == nil {
		t.Error("an update with an invalid resolver is not refused")
	}
	out := Update{Set: Set{id: {Name: "n", Endpoints: []string{"10.0.0.1:80"}, Names: []string{"a.example:80"}}}, Resolver: &Resolver{}}.ForNGINX()
	if out.Resolver != nil || out.Set[id].Names != nil || out.Set[id].Name != "" {
		t.Errorf("NGINX is sent %+v", out)
	}
}
