package graph

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ProtocolTCP is what NGINX speaks to a TLSRoute's backends: it passes the
// connection's bytes on (the client's TLS, or, on a listener in mode
// Terminate, what NGINX decrypted).
const ProtocolTCP = "tcp"

// The Gateway API's limits on a TLSRoute (CEL and schema rules the API
// server may not have run).
const (
	maxTLSRouteRules       = 1
	maxTLSRouteBackendRefs = 16
)

// newTLSRoute builds a TLSRoute: its one rule passes connections, by the
// server name the client asks for (SNI), to its backends by weight.
func newTLSRoute(in *Input, k types.NamespacedName, tr *gatewayv1.TLSRoute, refs []*ParentRef) *Route {
	r := newRoute(in, KindTLSRoute, k, tr, tr.Spec.Hostnames, refs)
	if r.refuseOverLimit(tlsRouteLimits(&tr.Spec)) {
		return r
	}
	r.checkParentRefs(tr.Spec.ParentRefs)
	if r.invalid == "" && r.unreadable == "" {
		switch {
		case len(tr.Spec.Hostnames) == 0:
			r.invalid = "spec.hostnames: a TLSRoute needs at least one hostname"
		case len(tr.Spec.Rules) == 0:
			r.invalid = "spec.rules: a TLSRoute needs one rule"
		}
	}
	backendRefs := make([][]gatewayv1.BackendRef, len(tr.Spec.Rules))
	for i, rule := range tr.Spec.Rules {
		backendRefs[i] = rule.BackendRefs
	}
	r.passRules(in, backendRefs)
	return r
}

// passRules builds the rules of a route whose connections pass to its
// backends by weight (TLSRoute, TCPRoute, UDPRoute: one rule each, a list
// of backendRefs), and the route's ResolvedRefs.
func (r *Route) passRules(in *Input, rules [][]gatewayv1.BackendRef) {
	var resolved resolvedRefs
	for i, refs := range rules {
		rule := &Rule{Index: i, Valid: true}
		if len(refs) == 0 {
			rule.Valid, rule.Err = false, "backendRefs: a rule needs at least one backendRef"
		}
		for _, br := range refs {
			b, why := resolveBackend(in, r.Kind, r.Key.Namespace, br.BackendObjectReference, br.Weight)
			resolved.add(b, why)
			if b.Weight > 0 {
				rule.Backends = append(rule.Backends, b)
			}
		}
		r.Rules = append(r.Rules, rule)
	}
	r.setResolvedRefs(&resolved)
}

// settleTLSClaims gives each server name of a passthrough listener to one
// TLSRoute, the oldest (then the first by namespace and name): NGINX can
// pass a connection to one destination only. The others keep their
// attachment, without that name, and their Accepted message says which
// route serves it.
func settleTLSClaims(routes []*Route) {
	type slot struct {
		listener *Listener
		hostname string
	}
	winners := map[slot]*Route{}
	for _, r := range routes {
		if r.Kind != KindTLSRoute {
			continue
		}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				for _, h := range a.Hostnames {
					s := slot{a.Listener, h}
					if w := winners[s]; w == nil || Older(r.Source, w.Source) {
						winners[s] = r
					}
				}
			}
		}
	}
	for _, r := range routes {
		if r.Kind != KindTLSRoute {
			continue
		}
		for _, p := range r.Parents {
			var lost []string
			for i := range p.Attachments {
				a := &p.Attachments[i]
				var kept []string
				for _, h := range a.Hostnames {
					if w := winners[slot{a.Listener, h}]; w != r {
						lost = append(lost, fmt.Sprintf("%s on listener %s (TLSRoute %s is older)", h, a.Listener.Name, w.Key))
						continue
					}
					kept = append(kept, h)
				}
				a.Hostnames = kept
			}
			if len(lost) > 0 && len(p.Conditions) > 0 && p.Conditions[0].Status == metav1.ConditionTrue {
				p.Conditions[0].Message += "; these hostnames are served by another TLSRoute: " + strings.Join(lost, ", ")
			}
		}
	}
}

// Older orders objects that compete for one thing (policies for a target,
// routes for a hostname): the older first, then by namespace and name.
func Older(a, b client.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return client.ObjectKeyFromObject(a).String() < client.ObjectKeyFromObject(b).String()
}
