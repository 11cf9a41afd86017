package snapgen

import (
	"fmt"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// grpcRoute adds a GRPCRoute.
func (g *gen) grpcRoute(index int) {
	name := fmt.Sprintf("g%d", index)
	ns, common, hosts := g.routeSpec("GRPCRoute", name)
	r := &gatewayv1.GRPCRoute{ObjectMeta: meta(ns, name)}
	r.CreationTimestamp = g.timestamp()
	r.Spec.CommonRouteSpec, r.Spec.Hostnames = common, hosts
	for range 1 + g.intn(g.size.Rules) {
		r.Spec.Rules = append(r.Spec.Rules, g.grpcRule(ns))
	}
	g.add(r)
}

func (g *gen) grpcRule(ns string) gatewayv1.GRPCRouteRule {
	var rule gatewayv1.GRPCRouteRule
	for range g.upTo(g.size.Matches) {
		rule.Matches = append(rule.Matches, g.grpcMatch())
	}
	for range g.upTo(g.size.Filters) {
		rule.Filters = append(rule.Filters, g.grpcFilter(ns))
	}
	for range g.backendCount() {
		ref := gatewayv1.GRPCBackendRef{BackendRef: g.backendRef(ns)}
		if g.bad() {
			ref.Filters = []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: g.headerFilter()}}
		}
		rule.BackendRefs = append(rule.BackendRefs, ref)
	}
	return rule
}

func (g *gen) grpcMatch() gatewayv1.GRPCRouteMatch {
	var m gatewayv1.GRPCRouteMatch
	if g.intn(4) > 0 {
		mm := &gatewayv1.GRPCMethodMatch{}
		regex := g.one(3)
		if regex {
			mm.Type = ptr.To(gatewayv1.GRPCMethodMatchRegularExpression)
		}
		value := func(names ...string) *string {
			if regex {
				return ptr.To(oneOf(g, ".*", "Get|Put", "[A-Z][a-z]+", g.regex()))
			}
			return ptr.To(oneOf(g, names...))
		}
		switch g.intn(4) {
		case 0, 1:
			mm.Service, mm.Method = value("pkg.Echo", "grpc.health.v1.Health", "_x.Y1"), value("Get", "Check", "_x")
		case 2:
			mm.Service = value("pkg.Echo", "Svc")
		default:
			mm.Method = value("Get", "Watch")
		}
		if g.bad() && !regex {
			mm.Service, mm.Method = ptr.To(oneOf(g, "bad service", "a..b", "")), ptr.To(oneOf(g, "9bad", "a/b", ""))
		}
		m.Method = mm
	}
	for range g.upTo(2) {
		h := gatewayv1.GRPCHeaderMatch{Name: gatewayv1.GRPCHeaderName(g.headerName()), Value: g.headerValue()}
		if g.one(3) {
			h.Type, h.Value = ptr.To(gatewayv1.GRPCHeaderMatchRegularExpression), g.regex()
		}
		m.Headers = append(m.Headers, h)
	}
	return m
}

func (g *gen) grpcFilter(ns string) gatewayv1.GRPCRouteFilter {
	if g.bad() {
		if g.one(2) {
			return gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier, RequestHeaderModifier: g.headerFilter()}
		}
		return gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterExtensionRef,
			ExtensionRef: &gatewayv1.LocalObjectReference{Group: "example.com", Kind: "Thing", Name: "x"}}
	}
	switch g.intn(3) {
	case 0:
		return gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: g.headerFilter()}
	case 1:
		return gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier, ResponseHeaderModifier: g.headerFilter()}
	}
	return gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterRequestMirror, RequestMirror: g.mirror(ns)}
}
