// Package translate is the one pipeline that turns a snapshot into a
// Gateway's data-plane files: graph, then policies, then NGINX
// configuration. The Gateway reconciler and the render command both use it,
// so what is previewed is what is pushed. It is pure.
package translate

import (
	"cmp"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/validation"
)

// Translation is everything one Gateway's snapshot translates to.
type Translation struct {
	Graph *graph.Gateway
	// Policies are the attachment of each kind of policy.Kinds, by kind name.
	Policies map[string]policy.Attachment
	// Files are the data-plane files; nil when the Gateway is not valid or
	// its configuration is held back (Held).
	Files []config.File
	// Endpoints are the endpoints of the files' dynamic upstreams, which
	// reach the data plane apart from the files; nil with them.
	Endpoints endpoints.Set
	// Resolver is how the data plane resolves the DNS names of Endpoints
	// (the NginxProxy's dnsResolver), sent with them.
	Resolver endpoints.Resolver
	// KeySources are the remote key sets of the files' JWT filters, which
	// the data plane fetches: sent with the endpoints; nil with the files.
	KeySources endpoints.KeySources
	// FileOrigins are, by path, the objects some of Files are written
	// from (see NameFiles).
	FileOrigins map[string][]string
	// Held says why the configuration of a valid Gateway must not reach its
	// data plane (policy.Holder): the data plane keeps the one it runs.
	Held []string

	// upstreams are the files' dynamic upstreams, whose endpoints
	// RefreshEndpoints sets anew.
	upstreams []*config.Upstream
	// fresh are the upstreams' endpoints a refresh read (nil for a
	// translation): the next refresh reads only the changed Services'.
	fresh map[graph.UpstreamKey]graph.UpstreamEndpoints
}

// Gateway translates one Gateway; nil when it is not a Gatewall Gateway.
func Gateway(in *graph.Input, key types.NamespacedName) *Translation {
	g := graph.Build(in, key)
	if g == nil {
		return nil
	}
	t := evaluate(in, g)
	if !g.Valid {
		return t
	}
	for _, k := range policy.Kinds {
		if h, ok := t.Policies[k.Name()].(policy.Holder); ok {
			t.Held = append(t.Held, h.HeldBack()...)
		}
	}
	if len(t.Held) > 0 {
		return t
	}
	var inc config.Includes
	for _, k := range policy.Kinds {
		t.Policies[k.Name()].AddIncludes(&inc)
	}
	// The graph admitted only the listeners and TLSRoutes whose listening
	// sockets fit the Gateway's workerConnections (graph/sockets.go).
	cfg := config.Build(g, inc)
	if cfg.IDConflict != "" {
		// Two upstreams' 128-bit IDs are the same (never seen): a data
		// plane told either's endpoints could send one's traffic to the
		// other's. Nothing is pushed.
		t.Held = append(t.Held, "its upstreams cannot be given IDs of their own ("+cfg.IDConflict+"); please report this as a bug")
		return t
	}
	t.Files, t.FileOrigins = cfg.Files(), cfg.FileOrigins
	t.Endpoints, t.upstreams = cfg.Endpoints(), cfg.Upstreams
	t.KeySources = cfg.KeySources()
	t.Resolver = resolver(g.NginxProxy.DNSResolver)
	return t
}

// RefreshEndpoints returns the translation of in when it is last's with
// other endpoints: in differs from last's input in EndpointSlices only
// (graph.Input.Fingerprints), and they change nothing but the endpoint
// sets of last's published configuration (graph.Gateway.RefreshEndpoints).
// Its Endpoints are then in's, and everything else is last's: the same
// files, statuses and policies; its graph's backends keep last's
// endpoints, which nothing reads after translation. ok is false when in
// must be translated.
func RefreshEndpoints(in *graph.Input, last *Translation) (t *Translation, ok bool) {
	return RefreshServices(in, last, nil)
}

// Refreshed says t is a refresh, which keeps the endpoints it read: the
// next refresh needs only the changed Services' slices (RefreshServices).
func (t *Translation) Refreshed() bool { return t.fresh != nil }

// RefreshServices is RefreshEndpoints for an input whose slices differ
// from those last was made or refreshed from in the changed Services'
// only: the other upstreams keep last's endpoints (when last is a refresh;
// a translation's are read again). nil changed reads every Service's.
func RefreshServices(in *graph.Input, last *Translation, changed map[types.NamespacedName]bool) (t *Translation, ok bool) {
	if last == nil || last.Files == nil {
		return nil, false
	}
	if last.fresh == nil {
		changed = nil
	}
	fresh, ok := last.Graph.RefreshServices(in, changed, last.fresh)
	if !ok {
		return nil, false
	}
	refreshed := *last
	refreshed.fresh = fresh
	refreshed.Endpoints = config.EndpointsOf(last.upstreams, fresh, last.Endpoints, changed)
	return &refreshed, true
}

// resolver is an NginxProxy's dnsResolver as the data plane takes it:
// servers on port 53 (a Hostname is resolved by the pod's own resolver),
// and the durations in milliseconds. The NginxProxy was validated (its
// durations parse); nil asks the pod's own resolver.
func resolver(r *v1alpha2.DNSResolver) endpoints.Resolver {
	var out endpoints.Resolver
	if r == nil {
		return out
	}
	for _, a := range r.Addresses {
		if ip, err := netip.ParseAddr(a.Value); err == nil {
			out.Servers = append(out.Servers, netip.AddrPortFrom(ip, 53).String())
		} else {
			out.Servers = append(out.Servers, endpoints.JoinName(a.Value, 53))
		}
	}
	if r.Timeout != nil {
		if d, err := validation.ParseDuration(string(*r.Timeout)); err == nil {
			out.TimeoutMillis = d.Milliseconds()
		}
	}
	if r.CacheTTL != nil {
		if d, err := validation.ParseDuration(string(*r.CacheTTL)); err == nil {
			out.CacheTTLMillis = d.Milliseconds()
		}
	}
	out.IPv4Only = r.DisableIPv6 != nil && *r.DisableIPv6
	return out
}

// evaluate evaluates the policies on a Gateway's graph.
func evaluate(in *graph.Input, g *graph.Gateway) *Translation {
	pg := policy.NewGateway(g)
	t := &Translation{Graph: g, Policies: map[string]policy.Attachment{}}
	for _, k := range policy.Kinds {
		t.Policies[k.Name()] = k.Evaluate(pg, in)
	}
	return t
}

// HeldMessage says, for statuses and logs, why a held configuration waits
// ("" when it is not held).
func (t *Translation) HeldMessage() string {
	if len(t.Held) == 0 {
		return ""
	}
	return "Gatewall holds this Gateway's configuration back, and its data plane keeps the one it runs, until it has what the data plane enforces: " +
		strings.Join(t.Held, "; ")
}

// ExplainDataPlane adds to the data plane's refusal of the configuration
// what it means for the policies (policy.Explainer); other answers pass
// unchanged.
func (t *Translation) ExplainDataPlane(dp status.DataPlane) status.DataPlane {
	if dp.State != status.Failed {
		return dp
	}
	for _, k := range policy.Kinds {
		if e, ok := t.Policies[k.Name()].(policy.Explainer); ok {
			if more := e.ExplainRefusal(dp.Message); more != "" {
				dp.Message += "; " + more
			}
		}
	}
	return dp
}

// Extra returns the conditions the policies add to a target: one
// <Kind>Affected per policy kind that affects it, with the kind's own
// message when it has one (policy.Describer).
func (t *Translation) Extra(ref graph.ObjectRef) []metav1.Condition {
	var out []metav1.Condition
	for _, k := range policy.Kinds {
		a := t.Policies[k.Name()]
		if !a.Affects(ref) {
			continue
		}
		c := status.Affected(k.AffectedType(), k.Name())
		if d, ok := a.(policy.Describer); ok {
			c.Message = cmp.Or(d.AffectedMessage(ref), c.Message)
		}
		out = append(out, c)
	}
	return out
}

// GatewayRef is the Gateway's own target reference.
func (t *Translation) GatewayRef() graph.ObjectRef {
	return graph.ObjectRef{Kind: "Gateway", Key: t.Graph.Key}
}

// RouteRef is a route's target reference.
func RouteRef(r *graph.Route) graph.ObjectRef {
	return graph.ObjectRef{Kind: r.Kind, Key: r.Key}
}
