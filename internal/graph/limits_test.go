package graph

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/internal/validation"
)

// limitCase is one list the Gateway API bounds: in makes an input whose
// list has n items, and verdict reads what became of the object holding
// it (refused, and why).
type limitCase struct {
	name    string
	limit   int
	in      func(n int) *Input
	verdict func(t *testing.T, g *Gateway, in *Input) (refused bool, why string)
	// atLimit is why the object is refused with limit items, for
	// another reason than the limit ("": it is accepted).
	atLimit string
}

func gatewayVerdict(t *testing.T, g *Gateway, _ *Input) (bool, string) {
	return !g.Valid, g.Conditions[0].Message
}

func routeVerdict(t *testing.T, g *Gateway, _ *Input) (bool, string) {
	p := g.Routes[0].Parents[0]
	return !p.Attached(), p.Conditions[0].Message
}

func lastListenerVerdict(t *testing.T, g *Gateway, _ *Input) (bool, string) {
	l := g.Listeners[len(g.Listeners)-1]
	return !l.Attachable, l.Conditions[0].Message
}

// withGateway changes testInput's Gateway.
func withGateway(change func(gw *gatewayv1.Gateway), objs ...any) *Input {
	in := testInput(objs...)
	change(in.Gateways[key("ns", "gw")])
	return in
}

func times[T any](n int, item func(i int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

func pathRule(i int) gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch(fmt.Sprintf("/r%d", i))}, BackendRefs: appRefs()}
}

// otherGatewayRefs are n-1 parentRefs to Gateways of another namespace,
// and one to the test Gateway.
func otherGatewayRefs(n int) []gatewayv1.ParentReference {
	return append(times(n-1, func(i int) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Namespace: ptr.To[gatewayv1.Namespace]("elsewhere"), Name: gatewayv1.ObjectName(fmt.Sprintf("gw%d", i))}
	}), gatewayv1.ParentReference{Name: "gw"})
}

func tlsRoute(change func(r *gatewayv1.TLSRoute)) *gatewayv1.TLSRoute {
	r := &gatewayv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tls"},
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"a.example.com"},
			Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: appBackend}}}},
		},
	}
	change(r)
	return r
}

// withPassthrough adds a passthrough listener to testInput's Gateway, for TLSRoutes.
func withPassthrough(objs ...any) *Input {
	return withGateway(func(gw *gatewayv1.Gateway) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	}, objs...)
}

func limitCases() []limitCase {
	route := func(change func(n int, r *gatewayv1.HTTPRoute)) func(int) *Input {
		return func(n int) *Input {
			r := testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})
			change(n, r)
			return testInput(r)
		}
	}
	grpc := func(change func(n int, r *gatewayv1.GRPCRoute)) func(int) *Input {
		return func(n int) *Input {
			r := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}, Spec: gatewayv1.GRPCRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: appBackend}}}}}}}
			change(n, r)
			return testInput(r)
		}
	}
	header := gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-A", Value: "1"}}}}
	caRef := gatewayv1.ObjectReference{Kind: "ConfigMap", Name: "ca"}
	return []limitCase{
		{"Gateway spec.listeners", validation.MaxListeners, func(n int) *Input {
			return withGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.Listeners = times(n, func(i int) gatewayv1.Listener {
					return gatewayv1.Listener{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), Port: gatewayv1.PortNumber(10000 + i), Protocol: gatewayv1.HTTPProtocolType}
				})
			})
		}, func(t *testing.T, g *Gateway, in *Input) (bool, string) {
			if len(g.Listeners) > validation.MaxListeners {
				t.Errorf("%d listeners read, more than a status can list", len(g.Listeners))
			}
			return gatewayVerdict(t, g, in)
		}, ""},
		{"Gateway spec.addresses", validation.MaxAddresses, func(n int) *Input {
			return withGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.Addresses = times(n, func(i int) gatewayv1.GatewaySpecAddress {
					return gatewayv1.GatewaySpecAddress{Type: ptr.To(gatewayv1.IPAddressType), Value: fmt.Sprintf("10.9.0.%d", i+1)}
				})
			})
		}, gatewayVerdict, ""},
		{"Gateway spec.tls.frontend.perPort", validation.MaxFrontendPorts, func(n int) *Input {
			return withGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{PerPort: times(n, func(i int) gatewayv1.TLSPortConfig {
					return gatewayv1.TLSPortConfig{Port: gatewayv1.PortNumber(10000 + i), TLS: gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: []gatewayv1.ObjectReference{caRef}}}}
				})}}
			})
		}, gatewayVerdict, ""},
		{"Gateway caCertificateRefs", validation.MaxFrontendCARefs, func(n int) *Input {
			return withGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{Default: gatewayv1.TLSConfig{
					Validation: &gatewayv1.FrontendTLSValidation{CACertificateRefs: times(n, func(int) gatewayv1.ObjectReference { return caRef })}}}}
			})
		}, gatewayVerdict, ""},
		{"listener allowedRoutes.kinds", validation.MaxAllowedKinds, func(n int) *Input {
			return withGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "kinds", Port: 8080, Protocol: gatewayv1.HTTPProtocolType,
					AllowedRoutes: &gatewayv1.AllowedRoutes{Kinds: times(n, func(int) gatewayv1.RouteGroupKind { return gatewayv1.RouteGroupKind{Kind: "HTTPRoute"} })}})
			})
		}, lastListenerVerdict, ""},
		{"listener tls.certificateRefs", validation.MaxCertificateRefs, func(n int) *Input {
			return withGateway(func(gw *gatewayv1.Gateway) {
				gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
					TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: times(n, func(int) gatewayv1.SecretObjectReference { return gatewayv1.SecretObjectReference{Name: "cert"} })}})
			})
		}, lastListenerVerdict, ""},
		{"ListenerSet spec.listeners", validation.MaxListeners, func(n int) *Input {
			in := listenerSetInput("set", 9000)
			in.ListenerSets[key("ns", "set")].Spec.Listeners = times(n, func(i int) gatewayv1.ListenerEntry {
				return gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), Port: gatewayv1.PortNumber(10000 + i), Protocol: gatewayv1.HTTPProtocolType}
			})
			return in
		}, func(t *testing.T, g *Gateway, _ *Input) (bool, string) {
			s := g.ListenerSets[0]
			return !s.Accepted, s.Conditions[0].Message
		}, ""},
		{"HTTPRoute spec.hostnames", validation.MaxHostnames, route(func(n int, r *gatewayv1.HTTPRoute) {
			r.Spec.Hostnames = times(n, func(i int) gatewayv1.Hostname { return gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i)) })
		}), routeVerdict, ""},
		{"HTTPRoute spec.parentRefs", validation.MaxParentRefs, route(func(n int, r *gatewayv1.HTTPRoute) { r.Spec.ParentRefs = otherGatewayRefs(n) }), routeVerdict, ""},
		{"HTTPRoute spec.rules", validation.MaxRules, route(func(n int, r *gatewayv1.HTTPRoute) { r.Spec.Rules = times(n, pathRule) }), routeVerdict, ""},
		{"HTTPRoute rule matches", validation.MaxRuleMatches, route(func(n int, r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Matches = times(n, func(i int) gatewayv1.HTTPRouteMatch { return prefixMatch(fmt.Sprintf("/m%d", i)) })
		}), routeVerdict, ""},
		{"HTTPRoute rule filters", validation.MaxFilters, route(func(n int, r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Filters = times(n, func(int) gatewayv1.HTTPRouteFilter { return header })
		}), routeVerdict, "cannot be repeated"},
		{"HTTPRoute rule backendRefs", validation.MaxBackendRefs, route(func(n int, r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].BackendRefs = times(n, func(int) gatewayv1.HTTPBackendRef { return appRefs()[0] })
		}), routeVerdict, ""},
		{"HTTPRoute backendRef filters", validation.MaxFilters, route(func(n int, r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].BackendRefs[0].Filters = times(n, func(int) gatewayv1.HTTPRouteFilter { return header })
		}), routeVerdict, "a backendRef takes one RequestHeaderModifier"},
		{"GRPCRoute spec.parentRefs", validation.MaxParentRefs, grpc(func(n int, r *gatewayv1.GRPCRoute) { r.Spec.ParentRefs = otherGatewayRefs(n) }), routeVerdict, ""},
		{"GRPCRoute spec.rules", validation.MaxRules, grpc(func(n int, r *gatewayv1.GRPCRoute) {
			r.Spec.Rules = times(n, func(int) gatewayv1.GRPCRouteRule { return r.Spec.Rules[0] })
		}), routeVerdict, ""},
		{"GRPCRoute rule backendRefs", validation.MaxBackendRefs, grpc(func(n int, r *gatewayv1.GRPCRoute) {
			r.Spec.Rules[0].BackendRefs = times(n, func(int) gatewayv1.GRPCBackendRef { return r.Spec.Rules[0].BackendRefs[0] })
		}), routeVerdict, ""},
		{"TLSRoute spec.hostnames", validation.MaxTLSRouteHostnames, func(n int) *Input {
			return withPassthrough(tlsRoute(func(r *gatewayv1.TLSRoute) {
				r.Spec.Hostnames = times(n, func(i int) gatewayv1.Hostname { return gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i)) })
			}))
		}, routeVerdict, ""},
		{"TLSRoute spec.parentRefs", validation.MaxParentRefs, func(n int) *Input {
			return withPassthrough(tlsRoute(func(r *gatewayv1.TLSRoute) { r.Spec.ParentRefs = otherGatewayRefs(n) }))
		}, routeVerdict, ""},
		{"TLSRoute rule backendRefs", maxTLSRouteBackendRefs, func(n int) *Input {
			return withPassthrough(tlsRoute(func(r *gatewayv1.TLSRoute) {
				r.Spec.Rules[0].BackendRefs = times(n, func(int) gatewayv1.BackendRef { return r.Spec.Rules[0].BackendRefs[0] })
			}))
		}, routeVerdict, ""},
		{"ReferenceGrant spec.from", validation.MaxGrantPeers, func(n int) *Input {
			// The route's backend is in another namespace; the grant's last
			// entry is the one allowing it.
			r := testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Namespace: ptr.To[gatewayv1.Namespace]("other"), Name: "svc", Port: ptr.To[gatewayv1.PortNumber](80)}}}}})
			from := times(n, func(i int) gatewayv1beta1.ReferenceGrantFrom {
				return gatewayv1beta1.ReferenceGrantFrom{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: gatewayv1.Namespace(fmt.Sprintf("ns%d", i))}
			})
			from[n-1].Namespace = "ns"
			return testInput(r, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "svc"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}},
				&gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "grant"},
					Spec: gatewayv1beta1.ReferenceGrantSpec{From: from, To: []gatewayv1beta1.ReferenceGrantTo{{Kind: "Service"}}}})
		}, func(t *testing.T, g *Gateway, _ *Input) (bool, string) {
			// A grant has no status: the route's ResolvedRefs says what it lacks.
			c := g.Routes[0].resolvedRefs
			return c.Reason == string(gatewayv1.RouteReasonRefNotPermitted), c.Message
		}, ""},
		{"BackendTLSPolicy targetRefs", validation.MaxPolicyTargets, func(n int) *Input {
			p := btlsPolicy("p", 0, "", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com", WellKnownCACertificates: ptr.To(gatewayv1.WellKnownCACertificatesSystem)})
			p.Spec.TargetRefs = times(n, func(int) gatewayv1.LocalPolicyTargetReferenceWithSectionName { return p.Spec.TargetRefs[0] })
			return testInput(p)
		}, backendTLSVerdict, ""},
		{"BackendTLSPolicy caCertificateRefs", validation.MaxBackendTLSCARefs, func(n int) *Input {
			p := btlsPolicy("p", 0, "", gatewayv1.BackendTLSPolicyValidation{Hostname: "svc.example.com",
				CACertificateRefs: times(n, func(int) gatewayv1.LocalObjectReference {
					return gatewayv1.LocalObjectReference{Kind: "ConfigMap", Name: "ca"}
				})})
			return testInput(p)
		}, backendTLSVerdict, "ConfigMap ns/ca not found"},
	}
}

// backendTLSVerdict is the outcome of the one BackendTLSPolicy of an input.
func backendTLSVerdict(_ *testing.T, _ *Gateway, in *Input) (bool, string) {
	for _, p := range in.BackendTLSPolicies {
		o := BackendTLSPolicyOutcome(in, p)
		return o.TLS == nil, o.Conditions[0].Message
	}
	return false, ""
}

// TestGatewayAPIListLimits: every list the Gateway API bounds is re-checked
// in Go: at its limit the object is not refused for it, one item more and
// the object holding the list is refused, naming the list and the limit
// (an object that bypassed the API server would otherwise be read whole
// and get a status longer than the API server stores).
func TestGatewayAPIListLimits(t *testing.T) {
	for _, c := range limitCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range []int{c.limit, c.limit + 1} {
				in := c.in(n)
				refused, why := c.verdict(t, buildTest(t, in), in)
				overLimit := strings.Contains(why, fmt.Sprintf("more than the %d the Gateway API allows", c.limit))
				switch {
				case n == c.limit && (overLimit || refused != (c.atLimit != "") || !strings.Contains(why, c.atLimit)):
					t.Errorf("%d items, the limit: refused=%v %q, want refused only for %q", n, refused, why, c.atLimit)
				case n > c.limit && (!refused || !overLimit):
					t.Errorf("%d items: refused=%v %q, want refused for the limit", n, refused, why)
				}
			}
		})
	}
}
