package graph

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TCPRoutes and UDPRoutes. A TCP or UDP listener has no hostname to tell
// its routes apart (the Gateway API ignores a listener's hostname for
// these protocols): all its connections, or datagrams, go to one route's
// backends, split by weight. When several routes attach to one listener
// they are all accepted and counted, and the oldest serves it (then the
// first by namespace and name, the Gateway API's rule for conflicts); the
// others' Accepted message says which route serves the listener.

// ProtocolUDP is what NGINX speaks to a UDPRoute's backends: it passes
// datagrams on.
const ProtocolUDP = "udp"

// The Gateway API's limits on TCPRoutes and UDPRoutes (schema rules the
// API server may not have run): one rule of 1 to 16 backendRefs.
const (
	maxL4RouteRules       = 1
	maxL4RouteBackendRefs = 16
)

// PassesConnections says whether a route kind's connections pass through
// NGINX's stream module to its backends as they are, with no HTTP
// processing: TLSRoutes, TCPRoutes and UDPRoutes. HTTP policies,
// BackendTLSPolicies and upstream settings do not apply to them.
func PassesConnections(kind string) bool {
	return kind == KindTLSRoute || kind == KindTCPRoute || kind == KindUDPRoute
}

// newTCPRoute builds a TCPRoute: its one rule passes the connections of the
// listeners it serves to its backends by weight.
func newTCPRoute(in *Input, k types.NamespacedName, tr *gatewayv1.TCPRoute, refs []*ParentRef) *Route {
	rules := make([][]gatewayv1.BackendRef, len(tr.Spec.Rules))
	for i, rule := range tr.Spec.Rules {
		rules[i] = rule.BackendRefs
	}
	return newL4Route(in, KindTCPRoute, k, tr, tr.Spec.ParentRefs, rules, refs)
}

// newUDPRoute builds a UDPRoute: its one rule passes the datagrams of the
// listeners it serves to its backends by weight (by client address and
// port: one client's datagrams go to one backend while its session lasts).
func newUDPRoute(in *Input, k types.NamespacedName, ur *gatewayv1.UDPRoute, refs []*ParentRef) *Route {
	rules := make([][]gatewayv1.BackendRef, len(ur.Spec.Rules))
	for i, rule := range ur.Spec.Rules {
		rules[i] = rule.BackendRefs
	}
	return newL4Route(in, KindUDPRoute, k, ur, ur.Spec.ParentRefs, rules, refs)
}

func newL4Route(in *Input, kind string, k types.NamespacedName, src client.Object, parentRefs []gatewayv1.ParentReference, rules [][]gatewayv1.BackendRef, refs []*ParentRef) *Route {
	r := newRoute(in, kind, k, src, nil, refs)
	if r.refuseOverLimit(l4RouteLimits(len(parentRefs), rules)) {
		return r
	}
	r.checkParentRefs(parentRefs)
	if r.invalid == "" && r.unreadable == "" && len(rules) == 0 {
		r.invalid = "spec.rules: a " + kind + " needs one rule"
	}
	r.passRules(in, rules)
	return r
}

func l4RouteLimits(parentRefs int, rules [][]gatewayv1.BackendRef) []listLimit {
	ls := routeLimits(0, 0, parentRefs, len(rules), maxL4RouteRules)
	for i, refs := range rules {
		ls = append(ls, listLimit{fmt.Sprintf("spec.rules[%d].backendRefs", i), len(refs), maxL4RouteBackendRefs})
	}
	return ls
}

// settleListenerClaims gives each TCP or UDP listener to one of the routes
// attached to it, the oldest (then the first by namespace and name). The
// others keep their attachment, serving nothing there (no hostnames), and
// their Accepted message says which route serves the listener.
func settleListenerClaims(routes []*Route) {
	winners := map[*Listener]*Route{}
	for _, r := range routes {
		if r.Kind != KindTCPRoute && r.Kind != KindUDPRoute {
			continue
		}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if w := winners[a.Listener]; w == nil || Older(r.Source, w.Source) {
					winners[a.Listener] = r
				}
			}
		}
	}
	for _, r := range routes {
		if r.Kind != KindTCPRoute && r.Kind != KindUDPRoute {
			continue
		}
		for _, p := range r.Parents {
			var lost []string
			for i := range p.Attachments {
				a := &p.Attachments[i]
				if w := winners[a.Listener]; w != r {
					a.Hostnames = nil
					lost = append(lost, fmt.Sprintf("listener %s (%s %s is older)", a.Listener.Name, w.Kind, w.Key))
				}
			}
			if len(lost) > 0 && len(p.Conditions) > 0 && p.Conditions[0].Status == metav1.ConditionTrue {
				p.Conditions[0].Message += "; another route serves these listeners, which pass all their traffic to one route: " + strings.Join(lost, ", ")
			}
		}
	}
}

// Serves says whether the route serves traffic through the attachment (a
// TCPRoute or UDPRoute that lost its listener to an older route, or a
// TLSRoute that lost all its hostnames there, does not).
func (a Attachment) Serves() bool { return len(a.Hostnames) > 0 }
