package graph

import (
	"slices"
	"strings"
	"sync"

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
	return g.RefreshServices(in, nil, nil)
}

// RefreshServices is RefreshEndpoints for an input whose slices differ
// only in those of the changed Services from the input of last, the
// Gateway's last refresh (what it returned): the upstreams of the other
// Services keep last's endpoints, read and checked then, and in need hold
// only the changed Services' slices. A nil changed (or last) reads every
// Service's; a last without one of the other Services' upstreams is not a
// refresh of g, and the Gateway is translated.
func (g *Gateway) RefreshServices(in *Input, changed map[types.NamespacedName]bool, last map[UpstreamKey]UpstreamEndpoints) (map[UpstreamKey]UpstreamEndpoints, bool) {
	plan := g.refreshPlan()
	if plan.stale {
		return nil, false
	}
	fresh := make(map[UpstreamKey]UpstreamEndpoints, len(plan.items))
	// Thousands of routes may share a Service: its slices are read once.
	type read struct {
		eps     []Endpoint
		names   []string
		refused bool
	}
	reads := make(map[servicePort]read, len(plan.items))
	for _, it := range plan.items {
		if it.static != nil {
			fresh[it.upstream] = UpstreamEndpoints{Endpoints: it.static.Endpoints, Names: it.static.Names}
			continue
		}
		if changed != nil && last != nil && !changed[it.port.svc] {
			if it.stream != nil {
				continue
			}
			f, ok := last[it.upstream]
			if !ok {
				// last is not a refresh of this graph (each has every
				// upstream of the plan): in may lack this Service's
				// slices (the reconciler reads the changed ones only).
				return nil, false
			}
			fresh[it.upstream] = f
			continue
		}
		got, ok := reads[it.port]
		if !ok {
			eps, names, refused := in.endpoints(it.port.svc, it.port.name, it.port.proto)
			got = read{eps, names, len(refused) > 0}
			reads[it.port] = got
		}
		if got.refused || (len(got.names) > 0) != it.hadNames {
			return nil, false
		}
		if it.stream != nil {
			if !slices.Equal(got.eps, it.stream.Endpoints) {
				return nil, false
			}
			continue
		}
		fresh[it.upstream] = UpstreamEndpoints{Endpoints: got.eps, Names: got.names}
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

// A refresh plan is what RefreshEndpoints reads of a graph's routes,
// gathered once per graph: at 5,000 routes of one Service, walking every
// route's backends for each change of its slices was most of a refresh.
type refreshPlan struct {
	// stale: a backend has endpoints left out (refused, cut or unsent).
	stale bool
	// items are the valid backends, those that write the same upstream
	// from the same Service port alike once.
	items []refreshItem
}

type refreshItem struct {
	upstream UpstreamKey
	port     servicePort
	hadNames bool
	// static is a backend whose endpoints do not come from slices (kept
	// as they are); stream one of a TLS, TCP or UDP route (its endpoints
	// must stay the same).
	static, stream *Backend
}

// servicePort is a Service port as slices are read for it.
type servicePort struct {
	svc   types.NamespacedName
	name  string
	proto corev1.Protocol
}

type lazyRefreshPlan struct {
	once sync.Once
	plan refreshPlan
}

// refreshPlan gathers the plan once, after translation (nothing changes
// the graph's backends then); a graph not made by Build gathers it each
// time.
func (g *Gateway) refreshPlan() refreshPlan {
	if g.refresh == nil {
		return g.gatherRefreshPlan()
	}
	g.refresh.once.Do(func() { g.refresh.plan = g.gatherRefreshPlan() })
	return g.refresh.plan
}

func (g *Gateway) gatherRefreshPlan() refreshPlan {
	var plan refreshPlan
	seen := map[refreshItem]bool{}
	for _, r := range g.Routes {
		for _, be := range r.allBackends() {
			if !be.Valid {
				continue
			}
			if len(be.Refused) > 0 || be.Unsent {
				return refreshPlan{stale: true}
			}
			it := refreshItem{upstream: UpstreamOf(be)}
			switch {
			case !be.slices:
				it.static = be
			default:
				it.port, it.hadNames = servicePort{be.Service, be.portName, be.portProtocol}, len(be.Names) > 0
				if PassesConnections(r.Kind) {
					it.stream = be
				}
			}
			if !seen[it] {
				seen[it] = true
				plan.items = append(plan.items, it)
			}
		}
	}
	return plan
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
