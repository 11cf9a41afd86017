package balancer

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/endpoints"
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
	if d.count("SSL_do_handshake() failed") == 0 {
		t.Fatalf("no TLS handshake failed: the test does not test what it means to")
	}
	got := d.spread("/rr", 20)
	if got["200 a1"] < 5 || got["200 a2"] < 5 || got["200 a1"]+got["200 a2"] != 20 {
		t.Errorf("the pod's own tenant: %v; want its 20 requests shared by a1 and a2", got)
	}
}
