package graph

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestIPAddressesAreNotHostnames: the Gateway API forbids IP addresses as
// listener and route hostnames (its pattern lets IPv4 ones through, and a
// TLS client never sends one as its server name). A listener with one is
// refused, the Gateway's other listeners keep working; a route with one is
// not accepted. Numeric labels in a DNS name stay allowed.
func TestIPAddressesAreNotHostnames(t *testing.T) {
	passthrough := &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}
	listener := func(protocol gatewayv1.ProtocolType, port gatewayv1.PortNumber, h string) gatewayv1.Listener {
		l := gatewayv1.Listener{Name: "extra", Port: port, Protocol: protocol, Hostname: ptr.To(gatewayv1.Hostname(h))}
		if protocol == gatewayv1.TLSProtocolType {
			l.TLS = passthrough
		}
		return l
	}
	for _, tc := range []struct {
		name     string
		listener gatewayv1.Listener
		refused  bool
	}{
		{"TLS listener, an IPv4 address", listener(gatewayv1.TLSProtocolType, 443, "10.0.0.1"), true},
		{"TLS listener, a wildcard of one", listener(gatewayv1.TLSProtocolType, 443, "*.10.0.0.1"), true},
		{"HTTP listener, an IPv4 address", listener(gatewayv1.HTTPProtocolType, 8080, "192.168.0.1"), true},
		{"TLS listener, numeric labels", listener(gatewayv1.TLSProtocolType, 443, "1.2.3.example.com"), false},
		{"HTTP listener, five numeric labels", listener(gatewayv1.HTTPProtocolType, 8080, "1.2.3.4.5"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			gw := in.Gateways[key("ns", "gw")]
			gw.Spec.Listeners = append(gw.Spec.Listeners, tc.listener)
			g := buildTest(t, in)
			if !g.Valid || !g.Listeners[0].Valid {
				t.Fatalf("the Gateway's other listener must keep working: %+v", g.Conditions)
			}
			l, c := g.Listeners[1], g.Listeners[1].Conditions[0]
			if got := !l.Attachable; got != tc.refused {
				t.Fatalf("refused=%v, want %v: %+v", got, tc.refused, c)
			}
			if tc.refused && (c.Reason != string(gatewayv1.ListenerReasonUnsupportedValue) || !strings.Contains(c.Message, "is an IP address")) {
				t.Errorf("refused with %s %q, want UnsupportedValue saying it is an IP address", c.Reason, c.Message)
			}
		})
	}

	tlsRoute := func(h string) *gatewayv1.TLSRoute {
		return &gatewayv1.TLSRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
			Spec: gatewayv1.TLSRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(h)},
				Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: appBackend}}}},
			},
		}
	}
	httpRoute := func(h string) *gatewayv1.HTTPRoute {
		r := testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})
		r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(h)}
		return r
	}
	for _, tc := range []struct {
		name     string
		route    any
		accepted bool
	}{
		{"TLSRoute, an IPv4 address", tlsRoute("10.1.2.3"), false},
		{"TLSRoute, a DNS name", tlsRoute("a.example.com"), true},
		{"HTTPRoute, an IPv4 address", httpRoute("127.0.0.1"), false},
		{"HTTPRoute, a DNS name", httpRoute("a.example.com"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput(tc.route)
			gw := in.Gateways[key("ns", "gw")]
			// A passthrough listener for any hostname: only the route's own check can refuse it.
			gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType, TLS: passthrough})
			g := buildTest(t, in)
			p := g.Routes[0].Parents[0]
			c := p.Conditions[0]
			if p.Attached() != tc.accepted || !tc.accepted && !strings.Contains(c.Message, "is an IP address") {
				t.Errorf("attached=%v, want %v: %+v", p.Attached(), tc.accepted, c)
			}
		})
	}
}
