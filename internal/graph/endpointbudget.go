package graph

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// The endpoints of a Gateway's HTTP and gRPC backends reach its data plane
// apart from the configuration (package endpoints), into a shared dict of
// fixed size that every tenant of the Gateway shares, and the state the
// balancer keeps of each (failures, requests in flight) into another. One
// tenant's Services must not fill them: the data plane would refuse
// another tenant's rollout. So the endpoints are a budget, as the sockets
// are (sockets.go), spent before anything is sent, in the Gateway API's
// precedence: routes oldest first, each route's rules and backends in
// order (a mirror after the rule's backends). What an upstream (a Service
// port, and protocol) is given is settled by the oldest route that uses
// it; newer routes share it.
//
// The bounds (endpoints.MaxEndpointsPerUpstream, MaxEndpoints,
// MaxUpstreams) are what the data plane was measured to hold with room to
// spare. An upstream over one keeps the endpoints that fit, the first by
// address (none: it answers 503); the ones left out are named on the
// ResolvedRefs condition of every route that uses it
// (RouteReasonUnusableEndpoints), and are not sent. The configuration
// never depends on it: a Service scaled past a bound reloads nothing.
// An upstream past the upstreams' bound is not sent at all
// (Backend.Unsent): its entry, even empty, would take room.

// endpointBudget counts what a Gateway's upstreams take as they are admitted.
type endpointBudget struct {
	upstreams map[UpstreamKey]*admitted
	// endpoints are the endpoints admitted, each DNS name counting as
	// the answers it may give (endpoints.MaxAnswersPerName); names are
	// the DNS names admitted.
	endpoints, names int
}

// UpstreamKey is what makes an upstream of the configuration
// (nginx/config/upstreams.go): a Service port, spoken to with HTTP/2
// without TLS or not.
type UpstreamKey struct {
	Service types.NamespacedName
	Port    int32
	H2C     bool
}

// admitted is what an upstream was given: the endpoints it keeps, why the
// others were left out ("" when none was), and whether it is sent at all.
type admitted struct {
	endpoints []Endpoint
	names     []string
	refused   string
	unsent    bool
}

// dynamicBackends are a route's backends whose upstreams take endpoints
// from the data plane's dict, in order: the valid ones of its configured
// rules, of their mirrors (a mirror copying no request has none) and of
// their external authorization services.
// Routes that pass connections (TLS, TCP, UDP) have none: their
// upstreams are in the configuration.
func (r *Route) dynamicBackends() []*Backend {
	if PassesConnections(r.Kind) {
		return nil
	}
	var out []*Backend
	for _, rule := range r.ValidRules() {
		for _, be := range rule.Backends {
			if be.Valid {
				out = append(out, be)
			}
		}
		for _, m := range rule.Filters.Mirrors {
			if m.Backend.Valid && m.Basis > 0 {
				out = append(out, m.Backend)
			}
		}
		if ea := rule.Filters.ExternalAuth; ea != nil && ea.Backend != nil && ea.Backend.Valid {
			out = append(out, ea.Backend)
		}
	}
	return out
}

// attached says whether a route is configured on the Gateway.
func (r *Route) attached() bool {
	for _, p := range r.Parents {
		if p.Attached() {
			return true
		}
	}
	return false
}

// UpstreamOf is the upstream of the configuration a backend is proxied to.
func UpstreamOf(be *Backend) UpstreamKey {
	return UpstreamKey{Service: be.Service, Port: be.Port, H2C: be.Protocol == ProtocolH2C}
}

// admitEndpoints spends the Gateway's endpoint budget on its routes, the
// oldest first, and gives every backend what its upstream was given.
func admitEndpoints(routes []*Route) {
	upstreams := spendBudget(routes, func(be *Backend) ([]Endpoint, []string) { return be.Endpoints, be.Names })
	for _, r := range routes {
		cut := false
		for _, be := range r.dynamicBackends() {
			a := upstreams[UpstreamOf(be)]
			if a == nil || a.refused == "" {
				continue
			}
			be.Endpoints, be.Names, be.Unsent = a.endpoints, a.names, a.unsent
			be.Refused = append(be.Refused, a.refused)
			cut = true
		}
		if cut {
			r.resolveAgain()
		}
	}
}

// spendBudget spends the endpoint budget on the routes, the oldest first:
// what each upstream is given of the endpoints and names have says its
// backend has.
func spendBudget(routes []*Route, have func(*Backend) ([]Endpoint, []string)) map[UpstreamKey]*admitted {
	b := &endpointBudget{upstreams: map[UpstreamKey]*admitted{}}
	byAge := append([]*Route(nil), routes...)
	sort.SliceStable(byAge, func(i, j int) bool { return Older(byAge[i].Source, byAge[j].Source) })
	for _, r := range byAge {
		if !r.attached() {
			continue
		}
		for _, be := range r.dynamicBackends() {
			if _, ok := b.upstreams[UpstreamOf(be)]; !ok {
				b.upstreams[UpstreamOf(be)] = b.admit(have(be))
			}
		}
	}
	return b.upstreams
}

// admit gives an upstream what is left of the budget, of what its backend
// has: its addresses first, then its DNS names, each taking the answers it
// may give (endpoints.MaxAnswersPerName) of the upstream's and the
// Gateway's endpoints, and one of the Gateway's names.
func (b *endpointBudget) admit(eps []Endpoint, dnsNames []string) *admitted {
	n, names := len(eps), len(dnsNames)
	if len(b.upstreams) >= endpoints.MaxUpstreams {
		return &admitted{unsent: true, refused: fmt.Sprintf(
			"none of its %s is used (it answers 503): the Gateway's data plane holds the endpoints of %d Service ports (and protocols), which older routes' backends take",
			countOf(n, names), endpoints.MaxUpstreams)}
	}
	a := &admitted{}
	var why []string
	switch keep := min(n, endpoints.MaxEndpointsPerUpstream, endpoints.MaxEndpoints-b.endpoints); {
	case keep == n:
		a.endpoints = eps
	case keep == endpoints.MaxEndpointsPerUpstream:
		a.endpoints = eps[:keep]
		why = append(why, fmt.Sprintf("%d of its %d endpoints are not used: the data plane holds %d endpoints of a Service port, the first by address",
			n-keep, n, endpoints.MaxEndpointsPerUpstream))
	default:
		a.endpoints = eps[:keep]
		why = append(why, fmt.Sprintf("%d of its %d endpoints are not used (the first by address are): the Gateway's data plane holds %d endpoints, which older routes' backends take",
			n-keep, n, endpoints.MaxEndpoints))
	}
	kept := len(a.endpoints)
	b.endpoints += kept
	upstreamRoom := (endpoints.MaxEndpointsPerUpstream - kept) / endpoints.MaxAnswersPerName
	gatewayRoom := (endpoints.MaxEndpoints - b.endpoints) / endpoints.MaxAnswersPerName
	switch keep := min(names, upstreamRoom, gatewayRoom, endpoints.MaxNames-b.names); {
	case keep == names:
		a.names = dnsNames
	case keep == upstreamRoom:
		a.names = dnsNames[:keep]
		why = append(why, fmt.Sprintf("%d of its %d DNS names are not resolved (the first by name are): each takes %d of the %d endpoints the data plane holds of a Service port",
			names-keep, names, endpoints.MaxAnswersPerName, endpoints.MaxEndpointsPerUpstream))
	case keep == gatewayRoom:
		a.names = dnsNames[:keep]
		why = append(why, fmt.Sprintf("%d of its %d DNS names are not resolved (the first by name are): each takes %d of the %d endpoints the Gateway's data plane holds, which older routes' backends take",
			names-keep, names, endpoints.MaxAnswersPerName, endpoints.MaxEndpoints))
	default:
		a.names = dnsNames[:keep]
		why = append(why, fmt.Sprintf("%d of its %d DNS names are not resolved (the first by name are): the Gateway's data plane resolves %d names, which older routes' backends take",
			names-keep, names, endpoints.MaxNames))
	}
	b.endpoints += len(a.names) * endpoints.MaxAnswersPerName
	b.names += len(a.names)
	a.refused = strings.Join(why, "; ")
	return a
}

// countOf says how many endpoints and DNS names a backend has.
func countOf(endpoints, names int) string {
	if names == 0 {
		return fmt.Sprintf("%d endpoints", endpoints)
	}
	return fmt.Sprintf("%d endpoints and %d DNS names", endpoints, names)
}

// resolveAgain sets the route's ResolvedRefs condition again, with the
// endpoints its backends were refused since it was first set, on every
// parent that has one.
func (r *Route) resolveAgain() {
	if r.resolved == nil {
		return
	}
	for _, rule := range r.Rules {
		for _, be := range rule.Backends {
			if be.Valid {
				r.resolved.addRefused(be)
			}
		}
		for _, m := range rule.Filters.Mirrors {
			if m.Backend.Valid {
				r.resolved.addRefused(m.Backend)
			}
		}
		if ea := rule.Filters.ExternalAuth; ea != nil && ea.Backend != nil && ea.Backend.Valid {
			r.resolved.addRefused(ea.Backend)
		}
	}
	r.setResolvedRefs(r.resolved)
	for _, p := range r.Parents {
		for i, c := range p.Conditions {
			if c.Type == string(gatewayv1.RouteConditionResolvedRefs) {
				p.Conditions[i] = r.resolvedRefs
			}
		}
	}
}
