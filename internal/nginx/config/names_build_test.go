package config_test

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// service is a Service in namespace ns with one TCP port and one ready
// endpoint at addr.
func service(ns, name string, port int32, addr string) []any {
	return []any{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "p", Port: port}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("p"), Port: ptr.To[int32](8443)}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{addr}}},
		},
	}
}

// oldPassSocketID is the name the TLS pass socket of a Service port's
// stream upstream had before names.go: 48 bits of FNV-1a.
func oldPassSocketID(ns, svc string, port int) string {
	h := fnv.New64a()
	for _, p := range []string{fmt.Sprintf("tls_%s_%s_%d", ns, svc, port), ""} {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%016x", h.Sum64())[:12]
}

// TestTLSRoutesOfCollidingServicesKeepTheirBackends: two teams' TLSRoutes
// on one passthrough listener, to Services whose old generated names
// collided (found by a cycle search over FNV-1a's 48 bits: the old
// configuration passed both hosts to one socket, and so to one team's
// backend), pass each host to its own Service.
func TestTLSRoutesOfCollidingServicesKeepTheirBackends(t *testing.T) {
	const a, b = "t613d28f030ab", "t3f4ec63cc135"
	if oldPassSocketID("ns", a, 443) != oldPassSocketID("ns", b, 443) {
		t.Fatal("the Services' old socket names do not collide: the test proves nothing")
	}
	objs := append(service("ns", a, 443, "10.0.0.10"), service("ns", b, 443, "10.0.0.20")...)
	for host, svc := range map[string]string{"a.pass.example.com": a, "b.pass.example.com": b} {
		objs = append(objs, &gatewayv1.TLSRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: svc},
			Spec: gatewayv1.TLSRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To[gatewayv1.SectionName]("pass")}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
				Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](443)}}}}},
			},
		})
	}
	in := httpInput(objs...)
	gw := in.Gateways[testGateway]
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	cfg := build(t, in)

	dest := map[string]string{}
	for _, e := range cfg.TLSPorts[0].Map.Entries {
		dest[e.Key] = e.Value
	}
	passes := map[string]*config.TLSPass{}
	for _, p := range cfg.TLSPasses {
		passes[p.Socket] = p
	}
	servers := map[string][]string{}
	for _, u := range cfg.StreamUpstreams {
		servers[u.Name] = u.Servers
	}
	for host, want := range map[string]string{"a.pass.example.com": "10.0.0.10:8443", "b.pass.example.com": "10.0.0.20:8443"} {
		p := passes[dest[host]]
		if p == nil {
			t.Fatalf("%s goes to %s, which no pass server listens on", host, dest[host])
		}
		if got := servers[p.Target]; len(got) != 1 || got[0] != want {
			t.Errorf("%s goes through %s to %s (%v), want %s", host, p.Socket, p.Target, got, want)
		}
	}
	if dest["a.pass.example.com"] == dest["b.pass.example.com"] {
		t.Errorf("both hosts go to %s", dest["a.pass.example.com"])
	}
	nginxAccepts(t, cfg)
}

// TestServicesCannotTakeGatewallsNames: a Service named like Gatewall's own
// upstreams (the sinks answering 500 and 503 were gatewall_sink_500 and
// gatewall_sink_503, which Service "sink" in namespace "gatewall" with
// ports 500 and 503 also was: "duplicate upstream", the whole Gateway's
// configuration refused) has upstreams of its own beside the sinks.
func TestServicesCannotTakeGatewallsNames(t *testing.T) {
	objs := []any{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "gatewall", Name: "sink"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "a", Port: 500}, {Name: "b", Port: 503}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "gatewall", Name: "sink-1", Labels: map[string]string{discoveryv1.LabelServiceName: "sink"}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("a"), Port: ptr.To[int32](8500)}, {Name: ptr.To("b"), Port: ptr.To[int32](8503)}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.5"}}},
		},
	}
	objs = append(objs, &gatewayv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gatewall", Name: "routes"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "ns"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Kind: "Service"}},
		},
	})
	ref := func(ns, name string, port int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Namespace: ptr.To(gatewayv1.Namespace(ns)), Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(port))}}}
	}
	// Each rule shares its requests with a backend that answers 500 (a
	// missing Service: the sink) or 503 (no endpoints: its upstream falls
	// back to the sink).
	objs = append(objs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "empty"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	objs = append(objs, httpRoute("r", nil,
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/500")},
			BackendRefs: []gatewayv1.HTTPBackendRef{ref("gatewall", "sink", 500), ref("ns", "missing", 80)}},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/503")},
			BackendRefs: []gatewayv1.HTTPBackendRef{ref("gatewall", "sink", 503), ref("ns", "empty", 80)}}))
	in := httpInput(objs...)
	g := graph.Build(in, testGateway)
	cfg := config.Build(g, config.Includes{})
	if len(cfg.Sinks) < 2 {
		t.Fatalf("want the sinks of 500 and 503, got %v", cfg.Sinks)
	}
	seen := map[string]bool{}
	for _, u := range cfg.Upstreams {
		if strings.HasPrefix(u.Name, "gatewall_sink_") || seen[u.Name] {
			t.Errorf("a Service's upstream is named %s", u.Name)
		}
		seen[u.Name] = true
	}
	if len(cfg.Upstreams) != 3 { // gatewall/sink:500, gatewall/sink:503, ns/empty:80
		t.Errorf("want 3 Service upstreams, got %d", len(cfg.Upstreams))
	}
	nginxAccepts(t, cfg)
}
