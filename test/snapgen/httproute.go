package snapgen

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeSpec picks a route's namespace and fills what HTTP and gRPC routes
// share: parents and hostnames.
func (g *gen) routeSpec(kind, name string) (string, gatewayv1.CommonRouteSpec, []gatewayv1.Hostname) {
	ns := nsDefault
	if g.one(8) {
		ns = oneOf(g, nsTeamA, nsTeamB)
	}
	g.routes = append(g.routes, routeRef{kind: kind, namespace: ns, name: name})
	var spec gatewayv1.CommonRouteSpec
	first := g.parentRef(ns)
	spec.ParentRefs = append(spec.ParentRefs, first)
	if g.one(4) {
		// A second parent. Two refs to one parent need distinct
		// sectionNames or ports, or the route is refused (sometimes it is).
		second := g.parentRef(ns)
		if !g.one(8) && second.Name == first.Name && ptr.Deref(second.Kind, "") == ptr.Deref(first.Kind, "") {
			first.SectionName, second.SectionName = ptr.To[gatewayv1.SectionName]("l0"), ptr.To[gatewayv1.SectionName]("l1")
			first.Port, second.Port = nil, nil
			spec.ParentRefs[0] = first
		}
		spec.ParentRefs = append(spec.ParentRefs, second)
	}
	var hosts []gatewayv1.Hostname
	for range oneOf(g, 0, 0, 1, 2, 3) {
		hosts = append(hosts, gatewayv1.Hostname(g.routeHostname()))
	}
	if g.one(32) {
		// As many hostnames as the Gateway API allows (16): a large
		// snapshot's server name tables then hold dozens of names (the
		// scale tests of package config try hundreds); rarely one too many.
		hosts = hosts[:0]
		for i := range 16 + oneOf(g, 0, 0, 0, 1) {
			hosts = append(hosts, gatewayv1.Hostname(fmt.Sprintf("h%d-%s.example.com", i, name)))
		}
	}
	return ns, spec, hosts
}

// parentRef names a generated Gateway (or a ListenerSet), often with a
// sectionName or port of one of its listeners.
func (g *gen) parentRef(routeNS string) gatewayv1.ParentReference {
	if len(g.listenerSets) > 0 && g.one(6) {
		s := g.listenerSets[g.intn(len(g.listenerSets))]
		ref := gatewayv1.ParentReference{Kind: ptr.To(gatewayv1.Kind("ListenerSet")), Name: gatewayv1.ObjectName(s.name)}
		if s.namespace != routeNS {
			ref.Namespace = ptr.To(gatewayv1.Namespace(s.namespace))
		}
		return ref
	}
	// Mostly a Gateway of the route's namespace: another's listeners
	// admit only their own namespace's routes by default.
	gw := g.gateways[0]
	if len(g.gateways) > 1 {
		if second := g.gateways[1]; second.namespace == routeNS && g.one(2) || g.one(6) {
			gw = second
		}
	}
	ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(gw.name)}
	if gw.namespace != routeNS {
		ref.Namespace = ptr.To(gatewayv1.Namespace(gw.namespace))
	}
	if g.one(16) {
		ref.Name = "missing"
	}
	switch g.intn(5) {
	case 1:
		ref.SectionName = ptr.To(gatewayv1.SectionName(gw.listeners[g.intn(len(gw.listeners))].name))
	case 2:
		ref.Port = ptr.To(gatewayv1.PortNumber(gw.listeners[g.intn(len(gw.listeners))].port))
	}
	return ref
}

// httpRoute adds an HTTPRoute.
func (g *gen) httpRoute(index int) {
	name := fmt.Sprintf("r%d", index)
	ns, common, hosts := g.routeSpec("HTTPRoute", name)
	r := &gatewayv1.HTTPRoute{ObjectMeta: meta(ns, name)}
	r.CreationTimestamp = g.timestamp()
	r.Spec.CommonRouteSpec, r.Spec.Hostnames = common, hosts
	for range 1 + g.intn(g.size.Rules) {
		r.Spec.Rules = append(r.Spec.Rules, g.httpRule(ns))
	}
	g.add(r)
}

func (g *gen) httpRule(ns string) gatewayv1.HTTPRouteRule {
	var rule gatewayv1.HTTPRouteRule
	for range g.upTo(g.size.Matches) {
		rule.Matches = append(rule.Matches, g.httpMatch())
	}
	seen := map[gatewayv1.HTTPRouteFilterType]bool{}
	for range g.upTo(g.size.Filters) {
		f := g.httpFilter(ns)
		// A filter type once (mirrors aside), a redirect without a rewrite:
		// the rare rule that breaks this is refused.
		clash := f.Type == gatewayv1.HTTPRouteFilterRequestRedirect && seen[gatewayv1.HTTPRouteFilterURLRewrite] ||
			f.Type == gatewayv1.HTTPRouteFilterURLRewrite && seen[gatewayv1.HTTPRouteFilterRequestRedirect]
		if (seen[f.Type] && f.Type != gatewayv1.HTTPRouteFilterRequestMirror || clash) && !g.bad() {
			continue
		}
		seen[f.Type] = true
		rule.Filters = append(rule.Filters, f)
	}
	if replacesPrefix(rule.Filters) && !g.bad() {
		// ReplacePrefixMatch needs the rule to match one path prefix.
		m := gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(g.path())}}
		if len(rule.Matches) > 0 {
			m.Headers = rule.Matches[0].Headers
		}
		rule.Matches = []gatewayv1.HTTPRouteMatch{m}
	}
	for range g.backendCount() {
		ref := gatewayv1.HTTPBackendRef{BackendRef: g.backendRef(ns)}
		if g.one(4) {
			ref.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: g.headerFilter()}}
			if g.bad() {
				ref.Filters[0] = g.httpFilter(ns)
			}
		}
		rule.BackendRefs = append(rule.BackendRefs, ref)
	}
	if seen[gatewayv1.HTTPRouteFilterRequestRedirect] && !g.bad() {
		rule.BackendRefs = nil // a redirect answers; it has no backends
	}
	if g.one(5) {
		rule.Timeouts = &gatewayv1.HTTPRouteTimeouts{}
		if g.one(2) {
			rule.Timeouts.Request = ptr.To(gatewayv1.Duration(g.duration()))
		}
		if g.one(2) {
			rule.Timeouts.BackendRequest = ptr.To(gatewayv1.Duration(g.duration()))
		}
	}
	return rule
}

func replacesPrefix(fs []gatewayv1.HTTPRouteFilter) bool {
	for _, f := range fs {
		var p *gatewayv1.HTTPPathModifier
		switch {
		case f.URLRewrite != nil:
			p = f.URLRewrite.Path
		case f.RequestRedirect != nil:
			p = f.RequestRedirect.Path
		}
		if p != nil && p.Type == gatewayv1.PrefixMatchHTTPPathModifier {
			return true
		}
	}
	return false
}

// backendCount is how many backendRefs a rule has: usually one.
func (g *gen) backendCount() int {
	return oneOf(g, 1, 1, 2, 0, g.size.Backends, 1+g.intn(g.size.Backends))
}

func (g *gen) httpMatch() gatewayv1.HTTPRouteMatch {
	var m gatewayv1.HTTPRouteMatch
	switch g.intn(5) {
	case 1:
		m.Path = &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchExact), Value: ptr.To(g.path())}
	case 2, 3:
		m.Path = &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(g.path())}
	case 4:
		m.Path = &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchRegularExpression), Value: ptr.To(g.regexPath())}
	}
	if g.one(4) {
		m.Method = ptr.To(gatewayv1.HTTPMethod(g.method()))
	}
	for range g.upTo(2) {
		h := gatewayv1.HTTPHeaderMatch{Name: gatewayv1.HTTPHeaderName(g.headerName()), Value: g.headerValue()}
		if g.one(3) {
			h.Type, h.Value = ptr.To(gatewayv1.HeaderMatchRegularExpression), g.regex()
		}
		m.Headers = append(m.Headers, h)
	}
	for range g.upTo(2) {
		q := gatewayv1.HTTPQueryParamMatch{Name: gatewayv1.HTTPHeaderName(g.queryName()), Value: g.queryValue()}
		if g.one(3) {
			q.Type, q.Value = ptr.To(gatewayv1.QueryParamMatchRegularExpression), g.regex()
		}
		m.QueryParams = append(m.QueryParams, q)
	}
	return m
}

// httpFilter is one filter of any kind the Gateway API defines.
func (g *gen) httpFilter(ns string) gatewayv1.HTTPRouteFilter {
	if g.bad() {
		if g.one(2) {
			// A filter whose configuration does not match its type.
			return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, RequestHeaderModifier: g.headerFilter()}
		}
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterExtensionRef,
			ExtensionRef: &gatewayv1.LocalObjectReference{Group: "example.com", Kind: "Thing", Name: "x"}}
	}
	switch g.intn(6) {
	case 0:
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: g.headerFilter()}
	case 1:
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: g.headerFilter()}
	case 2:
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: g.redirect()}
	case 3:
		f := &gatewayv1.HTTPURLRewriteFilter{Path: g.pathModifier()}
		if g.one(2) {
			f.Hostname = ptr.To(gatewayv1.PreciseHostname(g.exactHostname()))
		}
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: f}
	case 4:
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: g.mirror(ns)}
	}
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterCORS, CORS: g.cors()}
}

// headerFilter modifies distinct headers (names are case-insensitive),
// except for the rare filter that modifies one twice.
func (g *gen) headerFilter() *gatewayv1.HTTPHeaderFilter {
	f := &gatewayv1.HTTPHeaderFilter{}
	used := map[string]bool{}
	name := func() string {
		n := g.headerName()
		for used[strings.ToLower(n)] && !g.bad() {
			n += "-" + oneOf(g, "1", "2", "x")
		}
		used[strings.ToLower(n)] = true
		return n
	}
	for range g.upTo(2) {
		f.Set = append(f.Set, gatewayv1.HTTPHeader{Name: gatewayv1.HTTPHeaderName(name()), Value: g.headerValue()})
	}
	for range g.upTo(2) {
		f.Add = append(f.Add, gatewayv1.HTTPHeader{Name: gatewayv1.HTTPHeaderName(name()), Value: g.headerValue()})
	}
	for range g.upTo(1) {
		f.Remove = append(f.Remove, name())
	}
	return f
}

func (g *gen) redirect() *gatewayv1.HTTPRequestRedirectFilter {
	r := &gatewayv1.HTTPRequestRedirectFilter{Path: g.pathModifier()}
	if g.one(2) {
		r.Scheme = ptr.To(oneOf(g, "https", "http"))
	}
	if g.one(2) {
		r.Hostname = ptr.To(gatewayv1.PreciseHostname(g.exactHostname()))
	}
	if g.one(3) {
		r.Port = ptr.To(oneOf[gatewayv1.PortNumber](g, 8443, 80, 443, 65535))
	}
	if g.one(2) {
		r.StatusCode = ptr.To(oneOf(g, 301, 302, 303, 307, 308))
	}
	if g.bad() {
		r.Scheme, r.Port, r.StatusCode = ptr.To("ftp"), ptr.To[gatewayv1.PortNumber](oneOf[gatewayv1.PortNumber](g, 0, 70000)), ptr.To(200)
	}
	return r
}

// pathModifier is nil, a full path or a prefix replacement.
func (g *gen) pathModifier() *gatewayv1.HTTPPathModifier {
	switch g.intn(3) {
	case 1:
		return &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To(g.path())}
	case 2:
		m := &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To(g.path())}
		if g.bad() {
			m.ReplaceFullPath = ptr.To("/x")
		}
		return m
	}
	return nil
}

func (g *gen) mirror(ns string) *gatewayv1.HTTPRequestMirrorFilter {
	m := &gatewayv1.HTTPRequestMirrorFilter{BackendRef: g.backendRef(ns).BackendObjectReference}
	switch g.intn(4) {
	case 1:
		m.Percent = ptr.To(oneOf[int32](g, 50, 0, 100, 1))
	case 2:
		m.Fraction = &gatewayv1.Fraction{Numerator: oneOf[int32](g, 1, 0, 3), Denominator: ptr.To(oneOf[int32](g, 3, 100, 7))}
	}
	if g.bad() {
		m.Percent, m.Fraction = ptr.To[int32](101), &gatewayv1.Fraction{Numerator: 2, Denominator: ptr.To[int32](1)}
	}
	return m
}

func (g *gen) cors() *gatewayv1.HTTPCORSFilter {
	c := &gatewayv1.HTTPCORSFilter{}
	// "*" stands alone in a list; beside other values it is refused.
	if g.one(5) {
		c.AllowOrigins = []gatewayv1.CORSOrigin{"*"}
	} else {
		for range 1 + g.intn(2) {
			c.AllowOrigins = append(c.AllowOrigins, gatewayv1.CORSOrigin(oneOf(g, "https://a.example.com", "http://*.example.com",
				"https://a.example.com:8443", "http://*")))
		}
	}
	if g.one(4) {
		c.AllowMethods = []gatewayv1.HTTPMethodWithWildcard{"*"}
	} else {
		for range g.upTo(2) {
			c.AllowMethods = append(c.AllowMethods, gatewayv1.HTTPMethodWithWildcard(oneOf(g, "GET", "POST", "PUT")))
		}
	}
	if g.bad() {
		c.AllowOrigins = append(c.AllowOrigins, gatewayv1.CORSOrigin(oneOf(g, "ftp://x.example.com", "https://a b")))
		c.AllowMethods = append(c.AllowMethods, "FOO")
	}
	if g.one(4) {
		c.AllowHeaders = []gatewayv1.HTTPHeaderName{"*"}
	} else {
		for range g.upTo(2) {
			c.AllowHeaders = append(c.AllowHeaders, gatewayv1.HTTPHeaderName(oneOf(g, "X-A", g.headerName())))
		}
	}
	if g.bad() {
		c.AllowMethods = append(c.AllowMethods, "*", "GET")
		c.AllowHeaders = append(c.AllowHeaders, "*", "X-A")
	}
	for range g.upTo(1) {
		c.ExposeHeaders = append(c.ExposeHeaders, gatewayv1.HTTPHeaderName(g.headerName()))
	}
	if g.one(2) {
		c.AllowCredentials = ptr.To(true)
	}
	// The API server sets an unset maxAge to 5 (0 is read as unset);
	// under 0 is refused.
	c.MaxAge = oneOf[int32](g, 5, 86400, 1, 0)
	if g.bad() {
		c.MaxAge = oneOf[int32](g, -1, -86400)
	}
	return c
}

// backendRef refers to a Service of the route's namespace or another,
// by a port it has or not, with a weight from 0 to 1,000,000.
func (g *gen) backendRef(routeNS string) gatewayv1.BackendRef {
	ns := routeNS
	var ref gatewayv1.BackendRef
	if g.one(6) {
		ns = oneOf(g, nsTeamA, nsDefault)
		ref.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	svcs := g.services[ns]
	if len(svcs) == 0 || g.one(16) {
		ref.Name, ref.Port = "missing", ptr.To(gatewayv1.PortNumber(80))
	} else {
		s := svcs[g.intn(len(svcs))]
		ref.Name = gatewayv1.ObjectName(s.name)
		ref.Port = ptr.To(gatewayv1.PortNumber(s.ports[g.intn(len(s.ports))].port))
		switch {
		case g.bad():
			ref.Port = nil
		case g.one(16):
			ref.Port = ptr.To(gatewayv1.PortNumber(oneOf[int32](g, 12345, 0, 70000)))
		}
	}
	if g.bad() {
		ref.Kind = ptr.To(gatewayv1.Kind("Thing"))
	}
	switch g.intn(4) {
	case 1:
		ref.Weight = ptr.To(oneOf[int32](g, 0, 1, 1000000, 999999, 2))
		if g.bad() {
			ref.Weight = ptr.To(oneOf[int32](g, 1000001, -1))
		}
	case 2:
		ref.Weight = ptr.To(int32(g.intn(1000001)))
	}
	return ref
}
