package endpointfeed

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/test/dnstest"
)

func lookupAt(t *testing.T, servers []string, host string, ipv4Only bool) (dnsAnswer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return lookup(ctx, servers, host, ipv4Only)
}

// TestLookup: the DNS client takes both families' addresses through
// aliases, with the smallest TTL on the way; a name that does not exist
// is said so; a server that fails or keeps silent passes the question to
// the next; a truncated answer is asked again over TCP.
func TestLookup(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("app.example.com", 30, "10.1.0.2", "10.1.0.1", "fd00::1")
	srv.Alias("www.example.com", "cdn.example.net", 300)
	srv.Set("cdn.example.net", 20, "10.2.0.1")
	srv.Set("v4only.example.com", 60, "10.3.0.1")
	srv.Set("empty.example.com", 60)

	a, err := lookupAt(t, []string{srv.Addr}, "app.example.com", false)
	if err != nil || a.ttl != 30*time.Second || len(a.addrs) != 3 {
		t.Errorf("app.example.com: %+v %v", a, err)
	}
	if a, _ := lookupAt(t, []string{srv.Addr}, "app.example.com", true); len(a.addrs) != 2 {
		t.Errorf("IPv4 only: %v", a.addrs)
	}
	if srv.Queries("app.example.com", "AAAA") != 1 {
		t.Errorf("AAAA asked %d times, want once (not when IPv4 only)", srv.Queries("app.example.com", "AAAA"))
	}
	if a, err := lookupAt(t, []string{srv.Addr}, "WWW.example.com", false); err != nil || a.ttl != 20*time.Second || !reflect.DeepEqual(a.addrs, []netip.Addr{netip.MustParseAddr("10.2.0.1")}) {
		t.Errorf("an alias: %+v %v", a, err)
	}
	if a, err := lookupAt(t, []string{srv.Addr}, "v4only.example.com", false); err != nil || len(a.addrs) != 1 {
		t.Errorf("a name with no AAAA record: %+v %v", a, err)
	}
	if _, err := lookupAt(t, []string{srv.Addr}, "missing.example.com", false); !errors.Is(err, errNoSuchName) {
		t.Errorf("a missing name: %v", err)
	}
	if _, err := lookupAt(t, []string{srv.Addr}, "empty.example.com", false); err == nil || !strings.Contains(err.Error(), "no address records") {
		t.Errorf("a name without addresses: %v", err)
	}

	failing, silent := dnstest.Start(t), dnstest.Start(t)
	failing.Fail(true)
	silent.Silent(true)
	start := time.Now()
	a, err = lookupAt(t, []string{silent.Addr, failing.Addr, srv.Addr}, "app.example.com", false)
	if err != nil || len(a.addrs) != 3 || failing.Queries("app.example.com", "A") != 1 {
		t.Errorf("past a silent and a failing server: %+v %v", a, err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("the silent server held the lookup %s: a server gets its share of the time, not all of it", d)
	}
	_, err = lookupAt(t, []string{failing.Addr, silent.Addr}, "app.example.com", false)
	if err == nil || !strings.Contains(err.Error(), failing.Addr+" answered ServerFailure") || !strings.Contains(err.Error(), silent.Addr+": no answer in time") {
		t.Errorf("no server answering: %v", err)
	}

	srv.Truncate(true)
	if a, err := lookupAt(t, []string{srv.Addr}, "app.example.com", false); err != nil || len(a.addrs) != 3 {
		t.Errorf("a truncated answer asked again over TCP: %+v %v", a, err)
	}
}

// testNames is a names resolving at the servers, with short bounds.
func testNames(t *testing.T, r endpoints.Resolver) *names {
	t.Helper()
	n := newNames(DNSOptions{MinRefresh: 200 * time.Millisecond, StaleFor: 500 * time.Millisecond, ResolvConf: filepath.Join(t.TempDir(), "resolv.conf")})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go n.run(ctx)
	n.configure(r)
	return n
}

const nameID = "0123456789abcdef0123456789abcdef"

func nameSet(names ...string) endpoints.Set {
	return endpoints.Set{nameID: {Name: "svc_ns_ext_443", Endpoints: []string{"10.9.0.1:443"}, Names: names}}
}

// waitFor polls cond for a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func expanded(n *names, set endpoints.Set) []string { return n.expand(set)[nameID].Endpoints }

// TestNamesFollowTheirAnswers: a name's answers join its upstream's
// addresses with its port; an answer that changes is taken when its TTL
// (bounded below) runs out; a name that stops resolving keeps its last
// answers for StaleFor, then loses them, and is reported meanwhile.
func TestNamesFollowTheirAnswers(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("ext.example.com", 0, "10.1.0.1", "fd00::1")
	n := testNames(t, endpoints.Resolver{Servers: []string{srv.Addr}})
	set := nameSet("ext.example.com:443")
	n.want(set)
	n.wait(context.Background(), set, 3*time.Second)
	if got, want := expanded(n, set), []string{"10.1.0.1:443", "10.9.0.1:443", "[fd00::1]:443"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("endpoints %v, want %v", got, want)
	}
	if u := n.unresolved(set); len(u) > 0 {
		t.Errorf("unresolved %v", u)
	}
	srv.Set("ext.example.com", 0, "10.1.0.7")
	waitFor(t, "the new answer", func() bool { return reflect.DeepEqual(expanded(n, set), []string{"10.1.0.7:443", "10.9.0.1:443"}) })

	srv.Fail(true)
	waitFor(t, "the failure reported", func() bool { return strings.Contains(n.unresolved(set)[nameID], "answered ServerFailure") })
	if got := expanded(n, set); !reflect.DeepEqual(got, []string{"10.1.0.7:443", "10.9.0.1:443"}) {
		t.Errorf("a name that just stopped resolving lost its answers: %v", got)
	}
	if why := n.unresolved(set)[nameID]; !strings.Contains(why, "its last answers serve up to") {
		t.Errorf("why: %s", why)
	}
	waitFor(t, "the stale answers dropped", func() bool { return reflect.DeepEqual(expanded(n, set), []string{"10.9.0.1:443"}) })
	srv.Fail(false)
	srv.Delete("ext.example.com")
	waitFor(t, "NXDOMAIN reported", func() bool {
		return strings.Contains(n.unresolved(set)[nameID], "ext.example.com: no such name (NXDOMAIN)")
	})
	srv.Set("ext.example.com", 0, "10.1.0.8")
	waitFor(t, "the name back", func() bool { return reflect.DeepEqual(expanded(n, set), []string{"10.1.0.8:443", "10.9.0.1:443"}) })
	waitFor(t, "nothing reported", func() bool { return len(n.unresolved(set)) == 0 })
}

// TestNamesRefuseAddresses: answers are checked as EndpointSlice addresses
// are: a name answering loopback, link-local (a cloud's metadata service)
// or unspecified addresses gives its upstream none of them, and says so;
// the usable ones are kept, at most MaxAnswersPerName of them.
func TestNamesRefuseAddresses(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("evil.example.com", 60, "127.0.0.1", "169.254.169.254", "0.0.0.0", "::1", "::ffff:127.0.0.1", "fe80::1")
	srv.Set("mixed.example.com", 60, "127.0.0.2", "10.4.0.1")
	var many []string
	for i := range endpoints.MaxAnswersPerName + 4 {
		many = append(many, fmt.Sprintf("10.5.0.%d", 100-i))
	}
	srv.Set("many.example.com", 60, many...)
	n := testNames(t, endpoints.Resolver{Servers: []string{srv.Addr}})
	set := endpoints.Set{
		nameID:                             {Names: []string{"evil.example.com:80", "mixed.example.com:80"}},
		"fedcba9876543210fedcba9876543210": {Names: []string{"many.example.com:80"}},
	}
	n.want(set)
	n.wait(context.Background(), set, 3*time.Second)
	out := n.expand(set)
	if got := out[nameID].Endpoints; !reflect.DeepEqual(got, []string{"10.4.0.1:80"}) {
		t.Errorf("endpoints %v, want the one usable answer", got)
	}
	why := n.unresolved(set)[nameID]
	if !strings.Contains(why, "evil.example.com: it resolves only to addresses Gatewall refuses (address 127.0.0.1 is unspecified, loopback, link-local or multicast") ||
		strings.Contains(why, "mixed.example.com") {
		t.Errorf("why: %s", why)
	}
	if got := out["fedcba9876543210fedcba9876543210"].Endpoints; len(got) != endpoints.MaxAnswersPerName || got[0] != "10.5.0.81:80" {
		t.Errorf("a name of %d answers gives %v; want the first %d by address", len(many), got, endpoints.MaxAnswersPerName)
	}
	u := endpoints.Update{Set: out}
	if refused, err := u.Check(); err != nil || len(refused) > 0 {
		t.Errorf("what NGINX is handed does not pass the client's own check: %v %v", refused, err)
	}
}

// TestResolverServers: without servers, the pod's resolv.conf names them;
// a server named by a hostname is resolved by the pod's resolver, and one
// that does not resolve is said so.
func TestResolverServers(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("ext.example.com", 60, "10.1.0.1")
	n := testNames(t, endpoints.Resolver{})
	port := strings.TrimPrefix(srv.Addr, "127.0.0.1:")
	if err := os.WriteFile(n.opts.ResolvConf, []byte("search ns.svc.cluster.local\nnameserver 127.0.0.1\noptions ndots:5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, why := n.serversOf(context.Background(), endpoints.Resolver{})
	if !reflect.DeepEqual(servers, []string{"127.0.0.1:53"}) || why != "" {
		t.Errorf("resolv.conf's servers %v (%s)", servers, why)
	}
	n.lookupServer = func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "dns.example.net" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	r := endpoints.Resolver{Servers: []string{"dns.example.net:" + port}}
	n.configure(r)
	set := nameSet("ext.example.com:443")
	n.want(set)
	waitFor(t, "the answer through a server named by a hostname", func() bool { return len(expanded(n, set)) == 2 })
	n.configure(endpoints.Resolver{Servers: []string{"gone.example.net:53"}})
	waitFor(t, "the server's name reported", func() bool {
		return strings.Contains(n.unresolved(set)[nameID], "the DNS server gone.example.net does not resolve with the pod's resolver")
	})
}
