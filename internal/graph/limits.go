package graph

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// The Gateway API bounds every list Gatewall reads (its CRDs' maxItems).
// The API server enforces them, but can be bypassed, and an object over
// one would cost work in proportion and get a status too long to store;
// so they are checked again here, before the lists are read, and an
// object over one is refused whole, as the API server would refuse it.

// listLimit is one list of an object and its limit.
type listLimit struct {
	field    string
	n, limit int
}

// overLimit says which list is over its limit first, or nil.
func overLimit(ls []listLimit) error {
	for _, l := range ls {
		if err := validation.ListLength(l.field, l.n, l.limit); err != nil {
			return err
		}
	}
	return nil
}

// routeLimits are the limits of a route's own lists; rules adds each
// rule's (per kind).
func routeLimits(hostnames, hostnameLimit, parentRefs, rules, ruleLimit int) []listLimit {
	return []listLimit{
		{"spec.hostnames", hostnames, hostnameLimit},
		{"spec.parentRefs", parentRefs, validation.MaxParentRefs},
		{"spec.rules", rules, ruleLimit},
	}
}

// ruleLimits are rule i's lists: its matches and filters, its backendRefs
// (their filters' lengths), and each backendRef's filters.
func ruleLimits(i, matches, filters int, backendFilters []int) []listLimit {
	at := fmt.Sprintf("spec.rules[%d].", i)
	ls := []listLimit{{at + "matches", matches, validation.MaxRuleMatches}, {at + "filters", filters, validation.MaxFilters},
		{at + "backendRefs", len(backendFilters), validation.MaxBackendRefs}}
	for j, n := range backendFilters {
		ls = append(ls, listLimit{fmt.Sprintf("%sbackendRefs[%d].filters", at, j), n, validation.MaxFilters})
	}
	return ls
}

func httpRouteLimits(spec *gatewayv1.HTTPRouteSpec) []listLimit {
	ls := routeLimits(len(spec.Hostnames), validation.MaxHostnames, len(spec.ParentRefs), len(spec.Rules), validation.MaxRules)
	for i, r := range spec.Rules {
		backendFilters := filterCounts(r.BackendRefs, func(b gatewayv1.HTTPBackendRef) int { return len(b.Filters) })
		ls = append(ls, ruleLimits(i, len(r.Matches), len(r.Filters), backendFilters)...)
	}
	return ls
}

func grpcRouteLimits(spec *gatewayv1.GRPCRouteSpec) []listLimit {
	ls := routeLimits(len(spec.Hostnames), validation.MaxHostnames, len(spec.ParentRefs), len(spec.Rules), validation.MaxRules)
	for i, r := range spec.Rules {
		backendFilters := filterCounts(r.BackendRefs, func(b gatewayv1.GRPCBackendRef) int { return len(b.Filters) })
		ls = append(ls, ruleLimits(i, len(r.Matches), len(r.Filters), backendFilters)...)
	}
	return ls
}

// filterCounts are how many filters each backendRef of a rule has.
func filterCounts[B any](refs []B, filters func(B) int) []int {
	out := make([]int, len(refs))
	for i, b := range refs {
		out[i] = filters(b)
	}
	return out
}

func tlsRouteLimits(spec *gatewayv1.TLSRouteSpec) []listLimit {
	ls := routeLimits(len(spec.Hostnames), validation.MaxTLSRouteHostnames, len(spec.ParentRefs), len(spec.Rules), maxTLSRouteRules)
	for i, r := range spec.Rules {
		ls = append(ls, listLimit{fmt.Sprintf("spec.rules[%d].backendRefs", i), len(r.BackendRefs), maxTLSRouteBackendRefs})
	}
	return ls
}

// refuseOverLimit refuses a route with a list over its limit: it is not
// read further, and neither attaches nor resolves anything. It says
// whether it refused it.
func (r *Route) refuseOverLimit(ls []listLimit) bool {
	err := overLimit(ls)
	if err == nil {
		return false
	}
	r.invalid = err.Error()
	r.resolvedRefs = conditions.False(string(gatewayv1.RouteConditionResolvedRefs), string(gatewayv1.RouteReasonUnsupportedValue), "not resolved: "+r.invalid)
	return true
}

// gatewayLimits are a Gateway's lists.
func gatewayLimits(gw *gatewayv1.Gateway) []listLimit {
	ls := []listLimit{
		{"spec.listeners", len(gw.Spec.Listeners), validation.MaxListeners},
		{"spec.addresses", len(gw.Spec.Addresses), validation.MaxAddresses},
	}
	if t := gw.Spec.TLS; t != nil && t.Frontend != nil {
		ls = append(ls, listLimit{"spec.tls.frontend.perPort", len(t.Frontend.PerPort), validation.MaxFrontendPorts})
		if v := t.Frontend.Default.Validation; v != nil {
			ls = append(ls, listLimit{"spec.tls.frontend.default.validation.caCertificateRefs", len(v.CACertificateRefs), validation.MaxFrontendCARefs})
		}
		for i, p := range t.Frontend.PerPort {
			if v := p.TLS.Validation; v != nil {
				ls = append(ls, listLimit{fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation.caCertificateRefs", i), len(v.CACertificateRefs), validation.MaxFrontendCARefs})
			}
		}
	}
	return ls
}

// listenerLimits are a listener's lists.
func listenerLimits(l gatewayv1.Listener) error {
	var ls []listLimit
	if l.AllowedRoutes != nil {
		ls = append(ls, listLimit{"allowedRoutes.kinds", len(l.AllowedRoutes.Kinds), validation.MaxAllowedKinds})
	}
	if l.TLS != nil {
		ls = append(ls, listLimit{"tls.certificateRefs", len(l.TLS.CertificateRefs), validation.MaxCertificateRefs},
			listLimit{"tls.options", len(l.TLS.Options), validation.MaxTLSOptions})
	}
	return overLimit(ls)
}

// grantOverLimit says why a ReferenceGrant grants nothing: a list over its
// limit (it has no status of its own to say so).
func grantOverLimit(from, to int) error {
	return overLimit([]listLimit{{"spec.from", from, validation.MaxGrantPeers}, {"spec.to", to, validation.MaxGrantPeers}})
}
