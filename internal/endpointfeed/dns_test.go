package endpointfeed

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/test/dnstest"
)

// TestNamesThroughTheFeed: the manager sends an upstream's names and the
// Gateway's resolver; the pod's client hands NGINX the addresses they
// resolve to (never a name), follows their answers without a new version
// from the manager, and reports a name that does not resolve in its
// acknowledgements, which the pod's status carries while the pod stays
// current.
func TestNamesThroughTheFeed(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("ext.example.com", 0, "10.1.0.1")
	f := startFeed(t)
	s := set("10.0.0.1:80")
	s[otherID] = endpoints.Upstream{Name: "ns_ext_443", Endpoints: []string{}, Names: []string{"ext.example.com:443"}}
	v1 := f.Set(gw, s, endpoints.Resolver{Servers: []string{srv.Addr}})
	rec := newRecorder()
	runClientWith(t, f, "pod-a", rec, DNSOptions{MinRefresh: 100 * time.Millisecond, StaleFor: 200 * time.Millisecond})
	eventually(t, "the ack of v1", func() bool { p, _ := podStatus(f, "pod-a"); return p.Version == v1 && p.Current })
	nginxHas := func() []string {
		got, _ := rec.state()
		return got[otherID].Endpoints
	}
	if got := nginxHas(); !reflect.DeepEqual(got, []string{"10.1.0.1:443"}) {
		t.Fatalf("NGINX holds %v for the name, want its answer", got)
	}
	if _, u := rec.state(); u[0].Resolver != nil || u[0].Set[otherID].Names != nil {
		t.Errorf("NGINX was handed names or the resolver: %+v", u[0])
	}

	srv.Set("ext.example.com", 0, "10.1.0.2")
	eventually(t, "the new answer in NGINX", func() bool { return reflect.DeepEqual(nginxHas(), []string{"10.1.0.2:443"}) })
	if _, u := rec.state(); u[len(u)-1].Version != v1 || len(u[len(u)-1].Set) != 1 {
		t.Errorf("the new answer came as %+v; want the name's upstream alone, in the version NGINX has", u[len(u)-1])
	}

	srv.Delete("ext.example.com")
	eventually(t, "the name reported", func() bool { p, _ := podStatus(f, "pod-a"); return len(p.Unresolved) == 1 })
	p, _ := podStatus(f, "pod-a")
	if !p.Current || p.Unresolved[0].Name != "ns_ext_443" || !strings.Contains(p.UnresolvedString(), "ns_ext_443 (ext.example.com: no such name (NXDOMAIN)") {
		t.Errorf("status %+v: %s", p, p.UnresolvedString())
	}
	eventually(t, "the stale answer gone", func() bool { return len(nginxHas()) == 0 })

	srv.Set("ext.example.com", 0, "10.1.0.3")
	eventually(t, "the name back", func() bool { p, _ := podStatus(f, "pod-a"); return len(p.Unresolved) == 0 && len(nginxHas()) == 1 })

	// A new resolver alone is a new version: the client resolves again
	// with it.
	other := dnstest.Start(t)
	other.Set("ext.example.com", 0, "10.7.0.7")
	v2 := f.Set(gw, s, endpoints.Resolver{Servers: []string{other.Addr}})
	eventually(t, "the other server's answer", func() bool { return reflect.DeepEqual(nginxHas(), []string{"10.7.0.7:443"}) })
	eventually(t, "the ack of v2", func() bool { p, _ := podStatus(f, "pod-a"); return p.Version == v2 && p.Current })
}
