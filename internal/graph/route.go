package graph

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/validation"
)

// Route is an HTTPRoute, GRPCRoute, TLSRoute, TCPRoute or UDPRoute that
// names the Gateway in a parentRef.
type Route struct {
	Kind   string
	Key    types.NamespacedName
	Source client.Object
	// Hostnames are the route's own hostnames (empty: any).
	Hostnames []string
	// Parents are the route's parentRefs that name this Gateway, in spec order.
	Parents []*ParentRef
	// Rules in spec order; invalid ones have Valid=false and are not configured.
	Rules []*Rule

	// invalid holds why the whole route cannot be used ("" when usable).
	invalid string
	// unreadable says why the route could not be read ("" when it was):
	// its parents learn it, and nothing of it is resolved.
	unreadable string
	// resolvedRefs is the route's ResolvedRefs condition (shared by all
	// parents), made by resolved (the endpoint budget adds to it).
	resolvedRefs metav1.Condition
	resolved     *resolvedRefs
}

// ParentRef is one parentRef of a route that names this Gateway, or one of
// the ListenerSets that name it as their parent.
type ParentRef struct {
	// Index is the position in spec.parentRefs.
	Index int
	Ref   gatewayv1.ParentReference
	// Set is the ListenerSet the ref names; nil when it names the Gateway.
	// A ref to a Gateway attaches only to the Gateway's own listeners, a
	// ref to a ListenerSet only to the set's.
	Set *ListenerSet
	// Attachments are the listeners the route attached to through this ref.
	Attachments []Attachment
	// Conditions for this parent: Accepted, ResolvedRefs, and PartiallyInvalid when some rules are invalid.
	Conditions []metav1.Condition
}

// Attachment is a route attached to a listener, with the hostnames it serves there.
type Attachment struct {
	Listener *Listener
	// Hostnames are the intersection of the listener's and the route's
	// hostnames; "" stands for any hostname.
	Hostnames []string
}

// Attached says whether the route attached to at least one listener.
func (p *ParentRef) Attached() bool { return len(p.Attachments) > 0 }

// SpeaksH2C says whether clients of a route may speak HTTP/2 without TLS:
// gRPC clients do, and so may those of an HTTPRoute passing to h2c
// backends. A cleartext port serving such a route is sniffed (two sockets
// more, nginx/config/sniff.go).
func (r *Route) SpeaksH2C() bool {
	if r.Kind == KindGRPCRoute {
		return true
	}
	for _, rule := range r.ValidRules() {
		if rule.H2C {
			return true
		}
	}
	return false
}

// ValidRules returns the rules that are configured.
func (r *Route) ValidRules() []*Rule {
	var out []*Rule
	for _, rule := range r.Rules {
		if rule.Valid {
			out = append(out, rule)
		}
	}
	return out
}

func buildRoutes(in *Input, g *Gateway) []*Route {
	var routes []*Route
	for kind, objs := range in.Routes {
		build := routeKinds[kind].build
		for k, o := range objs {
			if refs := parentRefsTo(routekind.ParentRefs(o), o.GetNamespace(), g); len(refs) > 0 {
				routes = append(routes, build(in, k, o, refs))
			}
		}
	}
	sort.Slice(routes, func(i, j int) bool {
		if routes[i].Kind != routes[j].Kind {
			return routes[i].Kind < routes[j].Kind
		}
		return routes[i].Key.String() < routes[j].Key.String()
	})
	boundRetries(g, routes)
	g.settleSnippets(routes)
	for _, r := range routes {
		for _, p := range r.Parents {
			attach(g, r, p)
		}
	}
	if g.sockets != nil {
		g.sockets.admitRoutes(routes)
	}
	settleTLSClaims(routes)
	settleListenerClaims(routes)
	if g.sockets != nil {
		// Last: only what is configured takes endpoints, and key sets.
		admitEndpoints(routes)
		admitKeySources(routes)
	}
	return routes
}

// routeKinds are how the graph builds a route of each kind of
// routekind.Kinds, and the listener protocols it attaches to (a kind
// without an entry is a test failure: TestEveryRouteKindIsBuilt).
var routeKinds = map[string]struct {
	build     func(*Input, types.NamespacedName, client.Object, []*ParentRef) *Route
	protocols []gatewayv1.ProtocolType
}{
	KindGRPCRoute: {builder(newGRPCRoute), []gatewayv1.ProtocolType{gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType}},
	KindHTTPRoute: {builder(newHTTPRoute), []gatewayv1.ProtocolType{gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType}},
	KindTCPRoute:  {builder(newTCPRoute), []gatewayv1.ProtocolType{gatewayv1.TCPProtocolType}},
	KindTLSRoute:  {builder(newTLSRoute), []gatewayv1.ProtocolType{gatewayv1.TLSProtocolType}},
	KindUDPRoute:  {builder(newUDPRoute), []gatewayv1.ProtocolType{gatewayv1.UDPProtocolType}},
}

// builder adapts a kind's typed builder to routeKinds.
func builder[R client.Object](build func(*Input, types.NamespacedName, R, []*ParentRef) *Route) func(*Input, types.NamespacedName, client.Object, []*ParentRef) *Route {
	return func(in *Input, k types.NamespacedName, o client.Object, refs []*ParentRef) *Route {
		return build(in, k, o.(R), refs)
	}
}

// Parent is what a route's parentRef names, with the Gateway API's defaults
// filled in: group gateway.networking.k8s.io, kind Gateway, the route's
// namespace.
type Parent struct {
	Group, Kind string
	Key         types.NamespacedName
}

// ParentOf resolves a parentRef of a route in routeNamespace.
func ParentOf(ref gatewayv1.ParentReference, routeNamespace string) Parent {
	p := Parent{Group: gatewayGroup, Kind: "Gateway", Key: key(routeNamespace, string(ref.Name))}
	if ref.Group != nil {
		p.Group = string(*ref.Group)
	}
	if ref.Kind != nil {
		p.Kind = string(*ref.Kind)
	}
	if ref.Namespace != nil {
		p.Key.Namespace = string(*ref.Namespace)
	}
	return p
}

// Is says whether the parent is a Gateway API object of the kind.
func (p Parent) Is(kind string) bool { return p.Group == gatewayGroup && p.Kind == kind }

// parentRefsTo returns the parentRefs that name the Gateway or one of its ListenerSets.
func parentRefsTo(refs []gatewayv1.ParentReference, routeNamespace string, g *Gateway) []*ParentRef {
	var out []*ParentRef
	for i, ref := range refs {
		switch p := ParentOf(ref, routeNamespace); {
		case p.Is("Gateway") && p.Key == g.Key:
			out = append(out, &ParentRef{Index: i, Ref: ref})
		case p.Is(KindListenerSet):
			for _, s := range g.ListenerSets {
				if s.Key == p.Key {
					out = append(out, &ParentRef{Index: i, Ref: ref, Set: s})
				}
			}
		}
	}
	return out
}

// newRoute starts a Route with its name and hostnames validated. The API
// server refuses objects with invalid names, but an object may have bypassed
// it (or come from the offline renderer's files), and Gatewall names
// configuration files after routes.
func newRoute(in *Input, kind string, k types.NamespacedName, src client.Object, hostnames []gatewayv1.Hostname, refs []*ParentRef) *Route {
	r := &Route{Kind: kind, Key: k, Source: src, Parents: refs}
	if msg, ok := in.Unreadable(kind, k); ok {
		r.invalid, r.unreadable = msg, msg
		return r
	}
	for _, h := range hostnames {
		if err := validation.Hostname(string(h)); err != nil {
			r.invalid = "spec.hostnames: " + err.Error()
		}
		r.Hostnames = append(r.Hostnames, string(h))
	}
	if err := validation.ObjectReference(k.Namespace, k.Name); err != nil {
		r.invalid = "metadata: " + err.Error()
	}
	return r
}

// setResolvedRefs sets the route's ResolvedRefs condition from its backends;
// a route that could not be read resolved nothing.
func (r *Route) setResolvedRefs(c *resolvedRefs) {
	r.resolved = c
	if r.unreadable != "" {
		r.resolvedRefs = conditions.False(string(gatewayv1.RouteConditionResolvedRefs), string(gatewayv1.RouteReasonUnsupportedValue), r.unreadable)
		return
	}
	r.resolvedRefs = c.condition()
}

// checkParentRefs applies the Gateway API's rule on a route's parentRefs (a
// CEL rule the API server may not have run): refs to the same parent must
// each set a sectionName or port, and no two the same ones; otherwise the
// route would attach, and report status, twice through one parent.
func (r *Route) checkParentRefs(refs []gatewayv1.ParentReference) {
	type section struct {
		name string
		port gatewayv1.PortNumber
	}
	byParent := map[Parent][]section{}
	var order []Parent
	for _, ref := range refs {
		// As the Gateway API's rule does, an unset namespace differs from
		// the route's own written out: no route the API server accepts is refused.
		p := ParentOf(ref, "")
		var s section
		if ref.SectionName != nil {
			s.name = string(*ref.SectionName)
		}
		if ref.Port != nil {
			s.port = *ref.Port
		}
		if _, ok := byParent[p]; !ok {
			order = append(order, p)
		}
		byParent[p] = append(byParent[p], s)
	}
	for _, p := range order {
		sections := byParent[p]
		if len(sections) < 2 || r.invalid != "" {
			continue
		}
		seen := map[section]bool{}
		for _, s := range sections {
			switch {
			case s == section{}:
				r.invalid = "spec.parentRefs: sectionName or port must be specified when parentRefs includes 2 or more references to the same parent"
			case seen[s]:
				r.invalid = "spec.parentRefs: sectionName or port must be unique when parentRefs includes 2 or more references to the same parent"
			}
			seen[s] = true
		}
	}
}

// maxRouteMatches is the Gateway API's limit of matches across a route's rules.
const maxRouteMatches = 128

// checkMatchCount applies the Gateway API's limit on the matches of all the
// route's rules (a CEL rule the API server may not have run).
func (r *Route) checkMatchCount(n int) {
	if n >= maxRouteMatches && r.invalid == "" {
		r.invalid = fmt.Sprintf("spec.rules: the total number of matches across all rules must be less than %d, not %d", maxRouteMatches, n)
	}
}

// attach attaches the route to the Gateway's listeners through one parentRef
// and sets the parent's conditions.
func attach(g *Gateway, r *Route, p *ParentRef) {
	accepted := string(gatewayv1.RouteConditionAccepted)
	set := func(c metav1.Condition) {
		p.Conditions = []metav1.Condition{c, r.resolvedRefs}
	}
	if r.unreadable != "" {
		set(conditions.False(accepted, string(gatewayv1.RouteReasonUnsupportedValue), r.unreadable))
		return
	}
	if !g.attachable {
		set(conditions.False(accepted, string(gatewayv1.RouteReasonNoMatchingParent), fmt.Sprintf("Gateway %s is not accepted", g.Key)))
		return
	}
	if r.Kind == KindGRPCRoute && g.NginxProxy.DisableHTTP2 != nil && *g.NginxProxy.DisableHTTP2 {
		set(conditions.False(accepted, string(gatewayv1.RouteReasonUnsupportedValue),
			fmt.Sprintf("Gateway %s does not serve HTTP/2 (its NginxProxy's disableHTTP2), which gRPC needs", g.Key)))
		return
	}
	candidates, parent := g.Listeners, "Gateway"
	if p.Set != nil {
		if !p.Set.Accepted {
			set(conditions.False(accepted, string(gatewayv1.RouteReasonNoMatchingParent),
				fmt.Sprintf("ListenerSet %s is not attached to Gateway %s: %s", p.Set.Key, g.Key, p.Set.Conditions[0].Message)))
			return
		}
		candidates, parent = p.Set.Listeners, KindListenerSet
	}
	if p.Ref.SectionName != nil {
		candidates = filterListeners(candidates, func(l *Listener) bool { return l.Name == string(*p.Ref.SectionName) })
	}
	if p.Ref.Port != nil {
		candidates = filterListeners(candidates, func(l *Listener) bool { return l.Source.Port == *p.Ref.Port })
	}
	if len(candidates) == 0 {
		set(conditions.False(accepted, string(gatewayv1.RouteReasonNoMatchingParent), "no listener of the "+parent+" matches sectionName/port"))
		return
	}
	notAllowed, noHostname, invalid := 0, 0, 0
	for _, l := range candidates {
		switch {
		case !l.Attachable:
			invalid++
		case !l.admitsKind(r.Kind) || !l.allowedNamespace(r.Key.Namespace):
			notAllowed++
		default:
			hs := intersectHostnames(l.Hostname, r.Hostnames)
			if len(hs) == 0 {
				noHostname++
				continue
			}
			p.Attachments = append(p.Attachments, Attachment{Listener: l, Hostnames: hs})
		}
	}
	switch {
	case r.invalid != "":
		p.Attachments = nil
		set(conditions.False(accepted, string(gatewayv1.RouteReasonUnsupportedValue), r.invalid))
	case p.Attached() && len(r.ValidRules()) == 0 && len(r.Rules) > 0:
		p.Attachments = nil
		set(conditions.False(accepted, string(gatewayv1.RouteReasonUnsupportedValue), "no rule is valid: "+r.ruleErrors()))
	case p.Attached():
		msg := "Route is accepted"
		if off := unconfiguredListeners(p.Attachments); off != "" {
			msg += "; these listeners it attached to are not configured (their references do not resolve), so they serve none of its traffic: " + off
		}
		msg += r.ruleNotes()
		set(conditions.True(accepted, string(gatewayv1.RouteReasonAccepted), msg))
		if msg := r.ruleErrors(); msg != "" {
			p.Conditions = append(p.Conditions, conditions.True(string(gatewayv1.RouteConditionPartiallyInvalid),
				string(gatewayv1.RouteReasonUnsupportedValue), partiallyInvalidPrefix+msg))
		}
	case notAllowed > 0:
		set(conditions.False(accepted, string(gatewayv1.RouteReasonNotAllowedByListeners), "the listeners do not allow this route's kind or namespace"))
	case noHostname > 0:
		set(conditions.False(accepted, string(gatewayv1.RouteReasonNoMatchingListenerHostname), "no hostname of the route matches a listener's hostname"))
	default:
		set(conditions.False(accepted, string(gatewayv1.RouteReasonNoMatchingParent), fmt.Sprintf("%d matching listener(s) are not valid", invalid)))
	}
}

// unconfiguredListeners names the attachments' listeners that are not on the data plane.
func unconfiguredListeners(as []Attachment) string {
	var names []string
	for _, a := range as {
		if !a.Listener.Valid {
			names = append(names, a.Listener.Name)
		}
	}
	return strings.Join(names, ", ")
}

// partiallyInvalidPrefix starts the PartiallyInvalid message: the Gateway
// API requires it to start with "Dropped Rule" when invalid rules are
// dropped (as Gatewall does) rather than the last good state kept.
const partiallyInvalidPrefix = "Dropped Rule(s), invalid and not configured: "

// ruleNotes is what the Accepted message says of valid rules NGINX does not
// serve exactly as asked ("" when nothing).
func (r *Route) ruleNotes() string {
	var msgs []string
	for _, rule := range r.Rules {
		for _, n := range rule.Notes {
			if rule.Valid {
				msgs = append(msgs, fmt.Sprintf("spec.rules[%d]: %s", rule.Index, n))
			}
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return "; " + strings.Join(msgs, "; ")
}

func (r *Route) ruleErrors() string {
	var msgs []string
	for _, rule := range r.Rules {
		if !rule.Valid {
			msgs = append(msgs, fmt.Sprintf("spec.rules[%d]: %s", rule.Index, rule.Err))
		}
	}
	return strings.Join(msgs, "; ")
}

func filterListeners(ls []*Listener, keep func(*Listener) bool) []*Listener {
	var out []*Listener
	for _, l := range ls {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}

func countAttachedRoutes(g *Gateway) {
	for _, r := range g.Routes {
		seen := map[*Listener]bool{}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if !seen[a.Listener] {
					seen[a.Listener] = true
					a.Listener.AttachedRoutes++
				}
			}
		}
	}
}

// intersectHostnames returns the hostnames a route serves on a listener:
// each route hostname that matches the listener's, narrowed to the more
// specific of the two. "" means any hostname.
func intersectHostnames(listener string, route []string) []string {
	if len(route) == 0 {
		return []string{listener}
	}
	if listener == "" {
		return dedupeSorted(append([]string(nil), route...))
	}
	var out []string
	for _, h := range route {
		if m := hostnameIntersection(listener, h); m != "" {
			out = append(out, m)
		}
	}
	return dedupeSorted(out)
}

// hostnameIntersection returns the more specific of two hostnames when one
// matches the other, else "".
func hostnameIntersection(a, b string) string {
	switch {
	case a == b:
		return a
	case matchesWildcard(a, b):
		return b
	case matchesWildcard(b, a):
		return a
	}
	return ""
}

// matchesWildcard says whether wildcard pattern w ("*.example.com") matches h,
// which may itself be a more specific wildcard.
func matchesWildcard(w, h string) bool {
	if !strings.HasPrefix(w, "*.") {
		return false
	}
	suffix := w[1:] // ".example.com"
	name := strings.TrimPrefix(h, "*")
	return strings.HasSuffix(name, suffix) && len(name) > len(suffix)
}

func dedupeSorted(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}
