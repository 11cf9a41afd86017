package graph

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// Endpoints apart from translation: when a Gateway's input changed in its
// EndpointSlices only (Input.Fingerprints), the configuration and the
// statuses are the same as the last translation's, unless the change moves
// what endpoints decide beside the endpoint sets. RefreshEndpoints tells
// which, from the last translation's graph, without building one.

// UpstreamEndpoints are what an upstream's backend has of its Service's
// endpoints: addresses and DNS names, as Backend.Endpoints and Names.
type UpstreamEndpoints struct {
	Endpoints []Endpoint
	Names     []string
}

// RefreshEndpoints reads the endpoints of the Gateway's HTTP and gRPC
// upstreams again from in, an input that differs from the one g was built
// from in EndpointSlices only. It returns them by upstream, and true when
// building the graph from in would differ from g in those endpoints only:
// false when any backend has, or would have, endpoints left out (their
// refusal, the endpoint budget's cut or an upstream left unsent, named in
// route statuses), when a backend gains or loses DNS names (named in
// ResolvedRefs), and when a TLS, TCP or UDP route's backend's endpoints
// change (they are in the configuration). Then the Gateway is translated.
func (g *Gateway) RefreshEndpoints(in *Input) (map[UpstreamKey]UpstreamEndpoints, bool) {
	fresh := make(map[UpstreamKey]UpstreamEndpoints, len(g.Routes))
	// Thousands of routes may share a Service: its slices are read once.
	type read struct {
		eps     []Endpoint
		names   []string
		refused bool
	}
	type port struct {
		svc   types.NamespacedName
		name  string
		proto corev1.Protocol
	}
	reads := make(map[port]read, len(g.Routes))
	for _, r := range g.Routes {
		for _, be := range r.allBackends() {
			if !be.Valid {
				continue
			}
			if len(be.Refused) > 0 || be.Unsent {
				return nil, false
			}
			if !be.slices {
				fresh[UpstreamOf(be)] = UpstreamEndpoints{Endpoints: be.Endpoints, Names: be.Names}
				continue
			}
			p := port{be.Service, be.portName, be.portProtocol}
			got, ok := reads[p]
			if !ok {
				eps, names, refused := in.endpoints(be.Service, be.portName, be.portProtocol)
				got = read{eps, names, len(refused) > 0}
				reads[p] = got
			}
			eps, names := got.eps, got.names
			if got.refused || (len(names) > 0) != (len(be.Names) > 0) {
				return nil, false
			}
			if PassesConnections(r.Kind) {
				if !slices.Equal(eps, be.Endpoints) {
					return nil, false
				}
				continue
			}
			fresh[UpstreamOf(be)] = UpstreamEndpoints{Endpoints: eps, Names: names}
		}
	}
	if fitsBudget(fresh) {
		return fresh, true
	}
	upstreams := spendBudget(g.Routes, func(be *Backend) ([]Endpoint, []string) {
		f := fresh[UpstreamOf(be)]
		return f.Endpoints, f.Names
	})
	for _, a := range upstreams {
		if a.refused != "" || a.unsent {
			return nil, false
		}
	}
	return fresh, true
}

// allBackends are every backend a route's ResolvedRefs condition speaks
// of (resolvedRefs.backends): a superset of those the configuration has.
func (r *Route) allBackends() []*Backend {
	if r.resolved == nil {
		return nil
	}
	return r.resolved.backends
}

// fitsBudget says whether the endpoints fit the Gateway's endpoint budget
// whatever the order it is spent in (endpointbudget.go), without sorting
// the routes: every upstream within its bounds, and all of them within
// the Gateway's. The upstreams are the last translation's, none of which
// was left unsent.
func fitsBudget(fresh map[UpstreamKey]UpstreamEndpoints) bool {
	total, names := 0, 0
	for _, f := range fresh {
		n := len(f.Endpoints) + len(f.Names)*endpoints.MaxAnswersPerName
		if n > endpoints.MaxEndpointsPerUpstream {
			return false
		}
		total += n
		names += len(f.Names)
	}
	return total <= endpoints.MaxEndpoints && names <= endpoints.MaxNames
}

// Services are the Services whose EndpointSlices the Gateway's graph read
// (every backend its routes' statuses speak of, valid or not), sorted: a
// change of another Service's slices changes nothing of it.
func (g *Gateway) Services() []types.NamespacedName {
	seen := map[types.NamespacedName]bool{}
	var out []types.NamespacedName
	for _, r := range g.Routes {
		for _, be := range r.allBackends() {
			if be.Service.Name != "" && !seen[be.Service] {
				seen[be.Service] = true
				out = append(out, be.Service)
			}
		}
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return out
}
