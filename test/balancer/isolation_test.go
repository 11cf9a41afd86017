package balancer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// tlsTenant is another tenant's route to its Service tb, spoken to with
// TLS (a BackendTLSPolicy).
const tlsTenant = `
---
apiVersion: v1
kind: Service
metadata: {name: tb, namespace: ns}
spec: {ports: [{name: https, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: tb, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /tb}}]
    backendRefs: [{name: tb, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tb, namespace: ns}
spec:
  targetRefs: [{group: "", kind: Service, name: tb}]
  validation: {wellKnownCACertificates: System, hostname: tb.example.com}
`

// TestFailureMarksAreTheUpstreams: a tenant that lists another tenant's
// pod behind its own upstream, spoken to with TLS the pod does not speak,
// fails every connection there; the pod is avoided by that upstream only,
// and the pod's own tenant keeps sending it its share.
func TestFailureMarksAreTheUpstreams(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, tlsTenant))
	a1, a2 := d.backend("a1", "127.0.0.2"), d.backend("a2", "127.0.0.3")
	set := only("rr", a1, a2)
	// A second endpoint, where nothing listens, gives the tenant's
	// requests a second try: the balancer learns of a failed try when
	// NGINX asks it for the next.
	set[upstreamID("tb")] = endpoints.Upstream{Name: upstreamName("tb"), Endpoints: []string{a1.addr, "127.0.0.9:8080"}}
	d.setEndpoints(set)
	for i := 0; i < 10; i++ {
		if got := d.route("/tb"); !strings.HasPrefix(got, "502") {
			t.Fatalf("the TLS tenant's request %d to a pod without TLS: %s, want 502", i, got)
		}
	}
	if d.settledCount("SSL_do_handshake() failed") == 0 {
		t.Fatalf("no TLS handshake failed: the test does not test what it means to")
	}
	got := d.spread("/rr", 20)
	if got["200 a1"] < 5 || got["200 a2"] < 5 || got["200 a1"]+got["200 a2"] != 20 {
		t.Errorf("the pod's own tenant: %v; want its 20 requests shared by a1 and a2", got)
	}
}

// floodSlices are EndpointSlices of the Service ns/<svc>: slices of 1,000
// endpoints, each of 100 addresses (as many as an EndpointSlice allows),
// every address another.
func floodSlices(svc string, slices, base int) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for s := 0; s < slices; s++ {
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("%s-%d", svc, s), Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
		}
		for e := 0; e < 1000; e++ {
			addrs := make([]string, 100)
			for a := range addrs {
				v := base + (s*1000+e)*100 + a
				addrs[a] = fmt.Sprintf("10.%d.%d.%d", v>>16&255, v>>8&255, v&255)
			}
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: addrs})
		}
		out = append(out, slice)
	}
	return out
}

// endpointSlice is the Service ns/<svc>'s one EndpointSlice, of addrs.
func endpointSlice(svc string, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: svc + "-0", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
	}
	return s
}

// TestFloodingTenantCannotStopAnothersRollout: a tenant whose Services'
// EndpointSlices hold 1,000 endpoints of 100 addresses each (24 of them
// would fill the data plane's endpoints dict 1.5 times) rolls them out in
// the same update as another tenant's rollout; the manager's pipeline
// (graph, configuration, endpoints set) and the data plane's own client
// and Lua take both, and the other tenant's requests reach its new pods.
func TestFloodingTenantCannotStopAnothersRollout(t *testing.T) {
	var flood strings.Builder
	for i := 0; i < 24; i++ {
		fmt.Fprintf(&flood, `---
apiVersion: v1
kind: Service
metadata: {name: flood%[1]d, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: flood%[1]d, namespace: ns, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /flood%[1]d}}]
    backendRefs: [{name: flood%[1]d, port: 80}]
`, i)
	}
	in := decodeInput(t, flood.String())
	floods := map[int][]*discoveryv1.EndpointSlice{}
	for i := 0; i < 24; i++ {
		floods[i] = floodSlices(fmt.Sprintf("flood%d", i), 1, i<<20)
	}
	withSlices := func(rr string, generation int) *graph.Input {
		for _, slices := range floods {
			for _, s := range slices {
				s := s.DeepCopy()
				// A rollout of the flood: every address another.
				for e := range s.Endpoints {
					for a := range s.Endpoints[e].Addresses {
						s.Endpoints[e].Addresses[a] = strings.Replace(s.Endpoints[e].Addresses[a], "10.", fmt.Sprintf("1%d.", generation), 1)
					}
				}
				in.Add(s)
			}
		}
		in.Add(endpointSlice("rr", rr))
		return in
	}

	// The tenant's pods have addresses the API server (and Gatewall)
	// takes: not loopback ones, on NGINX's namespace's loopback device.
	first := render.Render(withSlices("10.99.0.2", 0), metav1.Now())
	d := startDataPlaneWith(t, nginxtest.ServeOptions{Files: first.Files[gwKey], Addrs: []string{"10.99.0.2/32", "10.99.0.3/32"}})
	b1, b2 := d.backend("b1", "10.99.0.2"), d.backend("b2", "10.99.0.3")
	set := first.Endpoints[gwKey]
	if n := set.Count(); n > endpoints.MaxEndpoints || n < 24000 {
		t.Errorf("the set holds %d endpoints, want the flood's 24,000 (one per endpoint, not per address) and the tenant's", n)
	}
	d.setEndpoints(set)
	if got := d.route("/rr"); got != "200 b1" {
		t.Fatalf("before the rollout: %s, want b1", got)
	}
	// Both tenants roll out; the flood's every address changes.
	next := render.Render(withSlices("10.99.0.3", 1), metav1.Now())
	d.setEndpoints(next.Endpoints[gwKey])
	if got := d.spread("/rr", 10); got["200 b2"] != 10 {
		t.Errorf("after the rollout: %v, want b2 only", got)
	}
	if r1, _ := b1.stats(); r1 != 1 {
		t.Errorf("b1 served %d requests, want the one before the rollout", r1)
	}
	if r2, _ := b2.stats(); r2 != 10 {
		t.Errorf("b2 served %d requests, want 10", r2)
	}
}

// TestFullDictRefusesOnlyWhatDoesNotFit: updates that fill the endpoints
// dict past its room (as a manager without bounds sent) refuse the
// upstreams that do not fit, alone: another tenant's rollout in the same
// update is applied and served, its list is never lost to an upstream
// that does not fit (nor to its own growth that does not), and an NGINX
// that starts again from the state file serves, and is ready with, every
// upstream that fits.
func TestFullDictRefusesOnlyWhatDoesNotFit(t *testing.T) {
	files := renderFiles(t, "")
	d := startDataPlane(t, files)
	b1, b2 := d.backend("b1", "127.0.0.2"), d.backend("b2", "127.0.0.3")
	d.setEndpoints(only("rr", b1))
	// Upstreams of 1,000 of the longest endpoints, 100 at a time (what
	// an update may carry), until the dict refuses some.
	n, refused := 0, map[string]string{}
	for len(refused) == 0 {
		u := endpoints.Update{Set: endpoints.Set{}}
		for i := 0; i < 100; i++ {
			u.Set[dictID(n)] = endpoints.Upstream{Endpoints: longEndpoints(n*1000, 1000)}
			n++
		}
		if n > 1000 {
			t.Fatal("the dict took 1,000 upstreams of 1,000 endpoints")
		}
		refused = d.apply(u)
	}
	for id, why := range refused {
		if !strings.HasPrefix(id, "d") || !strings.Contains(why, "no room") {
			t.Errorf("refused %s: %s", id, why)
		}
	}
	// The other tenant rolls out in an update that has no room for
	// more of the flood.
	u := endpoints.Update{Set: endpoints.Set{upstreamID("rr"): {Endpoints: []string{b2.addr}}}}
	for i := 0; i < 50; i++ {
		u.Set[dictID(n)] = endpoints.Upstream{Endpoints: longEndpoints(n*1000, 1000)}
		n++
	}
	refused = d.apply(u)
	if why, ok := refused[upstreamID("rr")]; ok || len(refused) == 0 {
		t.Fatalf("the tenant's rollout was refused (%s), or the flood was not (%d refused)", why, len(refused))
	}
	if got := d.spread("/rr", 10); got["200 b2"] != 10 {
		t.Errorf("after the rollout: %v, want b2 only", got)
	}
	// The tenant grows past the room left: refused, and it keeps b2.
	grow := append([]string{b2.addr}, longEndpoints(5_000_000, 999)...)
	refused = d.apply(endpoints.Update{Set: endpoints.Set{upstreamID("rr"): {Endpoints: grow}}})
	if _, ok := refused[upstreamID("rr")]; !ok {
		t.Fatalf("the dict took the tenant's 1,000 endpoints: the test needs it full")
	}
	if got := d.spread("/rr", 10); got["200 b2"] != 10 {
		t.Errorf("after its growth was refused: %v, want b2 still", got)
	}
	// NGINX starts again from a state file holding everything sent (the
	// client writes the whole set): more than the dict holds.
	state := endpoints.Set{upstreamID("rr"): {Endpoints: []string{b2.addr}}}
	for i := 0; i < n; i++ {
		state[dictID(i)] = endpoints.Upstream{Endpoints: longEndpoints(i*1000, 1000)}
	}
	data, err := json.Marshal(endpoints.Snapshot(state, 99).ForNGINX())
	if err != nil {
		t.Fatal(err)
	}
	again := startDataPlaneWithState(t, files, data)
	if got, _ := again.get("/readyz", 8081); !strings.HasPrefix(got, "204") {
		t.Errorf("readiness of the restarted NGINX: %s, want 204", got)
	}
	again.backend("b2", "127.0.0.3")
	if got := again.route("/rr"); got != "200 b2" {
		t.Errorf("the restarted NGINX answers %s, want b2", got)
	}
	if !strings.Contains(again.srv.Output(), "of the endpoints state file is not loaded: no room") {
		t.Errorf("the restarted NGINX did not say which upstreams it could not load")
	}
}
