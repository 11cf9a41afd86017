package render_test

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/confcheck"
	"github.com/gatewall/gatewall/test/snapgen"
)

// The properties every snapshot's rendering must have, checked by the fuzz
// target on small snapshots and by the property run on large ones:
//
//   - determinism: two snapshots generated from the same choices (distinct
//     objects, maps iterated in other orders) render the same bytes and
//     statuses;
//   - every Gateway's files pass confcheck: every directive is one the
//     renderer writes and every user value passes package validation;
//   - a Gateway has files exactly when its status says Accepted and its
//     configuration is not held back;
//   - a route's parent status says Accepted exactly when the route
//     attached, and each attachment to a configured listener gives a server
//     for each hostname, with a location for each match of each valid rule
//     (unless a more specific listener serves that hostname); nothing else
//     gets a server or a location;
//   - refused objects have no effect: without the routes no Gateway
//     accepted, the Gateways and ListenerSets not accepted, and the policies
//     that are invalid or conflicted, every Gateway renders the same files.

// checkProperties renders the snapshot generate returns (twice, for two
// independent copies) and checks every property. It returns the rendering.
func checkProperties(t testing.TB, generate func() *snapgen.Snapshot) render.Result {
	t.Helper()
	a, b := generate(), generate()
	ra := render.Render(a.Input(), goldenTime)
	rb := render.Render(b.Input(), goldenTime)
	if diff := renderDiff(ra, rb); diff != "" {
		t.Fatalf("the same snapshot rendered twice differs: %s", diff)
	}
	checkInputUnchanged(t, a, generate())
	checkStatusBounds(t, ra.Statuses)
	routes := routeStatuses(ra.Statuses)
	inB := b.Input()
	for _, o := range ra.Statuses {
		gw, ok := o.(*gatewayv1.Gateway)
		if !ok {
			continue
		}
		key := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
		files, rendered := ra.Files[key]
		// A Gateway whose configuration is held back (a WAF bundle in
		// force that Gatewall does not have) is accepted, and has no files.
		_, held := ra.Held[key]
		if accepted := meta.IsStatusConditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted)); accepted != (rendered || held) || rendered && held {
			t.Fatalf("Gateway %s: Accepted is %v, but files rendered is %v and held is %v", key, accepted, rendered, held)
		}
		g := graph.Build(inB, key)
		checkRouteStatuses(t, g, routes)
		if !rendered {
			continue
		}
		if err := confcheck.Check(files); err != nil {
			t.Fatalf("Gateway %s: %v", key, err)
		}
		checkServers(t, g, files)
	}
	checkRefusedHaveNoEffect(t, a, ra)
	return ra
}

// checkInputUnchanged: rendering (translation and statuses) does not modify
// the objects it reads. The manager's snapshots could then share the
// informer cache's objects instead of copying them; today it is the pure
// core's promise. fresh is an independent copy of rendered's snapshot.
func checkInputUnchanged(t testing.TB, rendered, fresh *snapgen.Snapshot) {
	t.Helper()
	if len(rendered.Objects) != len(fresh.Objects) {
		t.Fatalf("%d objects after rendering, %d generated", len(rendered.Objects), len(fresh.Objects))
	}
	for i, o := range rendered.Objects {
		if !equality.Semantic.DeepEqual(o, fresh.Objects[i]) {
			t.Fatalf("rendering modified its input %T %s/%s:\n%s", o, o.GetNamespace(), o.GetName(),
				diff.Diff(fresh.Objects[i], o))
		}
	}
}

// renderDiff says how two renderings differ; "" when they do not.
func renderDiff(a, b render.Result) string {
	if len(a.Files) != len(b.Files) {
		return fmt.Sprintf("%d then %d Gateways rendered", len(a.Files), len(b.Files))
	}
	for k, fa := range a.Files {
		fb := b.Files[k]
		if len(fa) != len(fb) {
			return fmt.Sprintf("Gateway %s: %d then %d files", k, len(fa), len(fb))
		}
		for i := range fa {
			if fa[i].Path != fb[i].Path || !bytes.Equal(fa[i].Data, fb[i].Data) || fa[i].Mode != fb[i].Mode {
				return fmt.Sprintf("Gateway %s: file %s differs", k, fa[i].Path)
			}
		}
	}
	if !reflect.DeepEqual(a.Statuses, b.Statuses) {
		return "statuses differ"
	}
	return ""
}

// routeStatuses indexes the routes' parent statuses by kind/namespace/name.
func routeStatuses(objs []client.Object) map[string][]gatewayv1.RouteParentStatus {
	out := map[string][]gatewayv1.RouteParentStatus{}
	for _, o := range objs {
		switch r := o.(type) {
		case *gatewayv1.HTTPRoute:
			out[graph.KindHTTPRoute+"/"+r.Namespace+"/"+r.Name] = r.Status.Parents
		case *gatewayv1.GRPCRoute:
			out[graph.KindGRPCRoute+"/"+r.Namespace+"/"+r.Name] = r.Status.Parents
		}
	}
	return out
}

// checkRouteStatuses: each parentRef naming the Gateway has a status, and
// it says Accepted exactly when the route attached through it.
func checkRouteStatuses(t testing.TB, g *graph.Gateway, routes map[string][]gatewayv1.RouteParentStatus) {
	t.Helper()
	if g == nil {
		return
	}
	for _, r := range g.Routes {
		id := r.Kind + "/" + r.Key.Namespace + "/" + r.Key.Name
		for _, p := range r.Parents {
			found := false
			for _, ps := range routes[id] {
				if !reflect.DeepEqual(ps.ParentRef, p.Ref) {
					continue
				}
				found = true
				if accepted := meta.IsStatusConditionTrue(ps.Conditions, string(gatewayv1.RouteConditionAccepted)); accepted != p.Attached() {
					t.Fatalf("%s parentRefs[%d]: status Accepted is %v, attached to %d listeners", id, p.Index, accepted, len(p.Attachments))
				}
				if meta.FindStatusCondition(ps.Conditions, string(gatewayv1.RouteConditionResolvedRefs)) == nil {
					t.Fatalf("%s parentRefs[%d]: no ResolvedRefs condition", id, p.Index)
				}
			}
			if !found {
				t.Fatalf("%s parentRefs[%d] names Gateway %s but has no status", id, p.Index, g.Key)
			}
		}
	}
}

// serverKey is a server: port and name ("" for the default server).
type serverKey struct {
	port int
	name string
}

// locKey is a location: modifier and path.
type locKey struct{ modifier, path string }

// checkServers compares a Gateway's server and location blocks with what
// its graph says must be served, both ways.
func checkServers(t testing.TB, g *graph.Gateway, files []config.File) {
	t.Helper()
	servers, err := confcheck.Servers(files)
	if err != nil {
		t.Fatalf("Gateway %s: %v", g.Key, err)
	}
	want := wantedServers(g)
	got := map[serverKey]confcheck.Server{}
	for _, s := range servers {
		k := serverKey{s.Port, s.Name}
		if _, dup := got[k]; dup {
			t.Fatalf("Gateway %s: two servers for port %d name %q", g.Key, s.Port, s.Name)
		}
		if s.Default != (s.Name == "") {
			t.Fatalf("Gateway %s: server %q on port %d: default_server is %v", g.Key, s.Name, s.Port, s.Default)
		}
		got[k] = s
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Fatalf("Gateway %s: no server for port %d name %q, which an accepted route or a listener needs", g.Key, k.port, k.name)
		}
	}
	for k, s := range got {
		locs, ok := want[k]
		if !ok {
			t.Fatalf("Gateway %s: server for port %d name %q, which no listener or accepted route asks for", g.Key, k.port, k.name)
		}
		have := map[locKey]bool{}
		for _, l := range s.Locations {
			lk := locKey{l.Modifier, l.Path}
			have[lk] = true
			switch {
			case l.Internal, strings.HasPrefix(l.Path, "@"), lk == locKey{"", "/"} && l.NotFound:
			case !locs[lk]:
				t.Fatalf("Gateway %s: server %q on port %d has location %s %q, which no accepted route's match asks for", g.Key, k.name, k.port, l.Modifier, l.Path)
			}
		}
		for lk := range locs {
			if !have[lk] {
				t.Fatalf("Gateway %s: server %q on port %d has no location %s %q for an accepted route's match", g.Key, k.name, k.port, lk.modifier, lk.path)
			}
		}
	}
}

// wantedServers are the servers a Gateway's graph asks for, each with the
// locations its routes' matches need: a default server per port of a
// configured listener, and one per hostname an attached route serves
// there. A hostname's routes are those of the most specific listener
// matching it (listener isolation).
func wantedServers(g *graph.Gateway) map[serverKey]map[locKey]bool {
	want := map[serverKey]map[locKey]bool{}
	byPort := map[int][]*graph.Listener{}
	for _, l := range g.ValidListeners() {
		if pr := l.Source.Protocol; pr != gatewayv1.HTTPProtocolType && pr != gatewayv1.HTTPSProtocolType {
			continue // served by the stream module
		}
		p := int(l.Source.Port)
		byPort[p] = append(byPort[p], l)
		want[serverKey{p, ""}] = map[locKey]bool{}
		// A listener with ciphers of its own has a server of its name, so
		// that its names never select another listener's (servers.go).
		if o := l.TLSOptions; l.Hostname != "" && (o.Ciphers != "" || o.PreferServerCiphers != "") {
			want[serverKey{p, l.Hostname}] = map[locKey]bool{}
		}
	}
	for _, r := range g.Routes {
		if graph.PassesConnections(r.Kind) {
			continue
		}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if !a.Listener.Valid {
					continue
				}
				port := int(a.Listener.Source.Port)
				for _, h := range a.Hostnames {
					k := serverKey{port, h}
					if want[k] == nil {
						want[k] = map[locKey]bool{}
					}
					if bestListener(byPort[port], h) != a.Listener {
						continue
					}
					for _, rule := range r.ValidRules() {
						for _, m := range rule.Matches {
							for _, lk := range matchLocations(m.Path) {
								want[k][lk] = true
							}
						}
					}
				}
			}
		}
	}
	return want
}

// bestListener is the listener serving requests for hostname h on a port:
// the one with that hostname, else the longest wildcard matching it, else
// the one without a hostname.
func bestListener(ls []*graph.Listener, h string) *graph.Listener {
	var best *graph.Listener
	score := -1
	for _, l := range ls {
		s := -1
		switch {
		case l.Hostname == h:
			s = 1 << 20
		case l.Hostname == "":
			s = 0
		case h != "" && strings.HasPrefix(l.Hostname, "*.") && strings.HasSuffix(strings.TrimPrefix(h, "*"), l.Hostname[1:]):
			s = len(l.Hostname)
		}
		if s > score {
			best, score = l, s
		}
	}
	return best
}

// matchLocations are the locations a path match needs.
func matchLocations(p graph.PathMatch) []locKey {
	switch {
	case p.Type == graph.PathExact:
		return []locKey{{"=", p.Value}}
	case p.Type == graph.PathRegex:
		return []locKey{{"~", p.Value}}
	case p.Value == "/":
		return []locKey{{"", "/"}}
	}
	return []locKey{{"=", p.Value}, {"", p.Value + "/"}}
}

// checkRefusedHaveNoEffect renders the snapshot without its refused
// objects and wants every Gateway's files unchanged.
func checkRefusedHaveNoEffect(t testing.TB, s *snapgen.Snapshot, res render.Result) {
	t.Helper()
	refused := refusedObjects(res.Statuses)
	dropped := 0
	without := s.Without(func(o client.Object) bool {
		drop := refused[objectKey(o)] || invalidPolicy(o)
		if drop {
			dropped++
		}
		return drop
	})
	if dropped == 0 {
		return
	}
	again := render.Render(without.Input(), goldenTime)
	if len(again.Files) != len(res.Files) {
		t.Fatalf("without its %d refused objects, the snapshot renders %d Gateways, not %d", dropped, len(again.Files), len(res.Files))
	}
	for k, files := range res.Files {
		b := again.Files[k]
		for i := range files {
			if i >= len(b) || files[i].Path != b[i].Path || !bytes.Equal(files[i].Data, b[i].Data) {
				t.Fatalf("Gateway %s: file %s changes when the %d refused objects are removed", k, files[i].Path, dropped)
			}
		}
		if len(b) != len(files) {
			t.Fatalf("Gateway %s: %d files, %d when the refused objects are removed", k, len(files), len(b))
		}
	}
}

func objectKey(o client.Object) string {
	return fmt.Sprintf("%T/%s/%s", o, o.GetNamespace(), o.GetName())
}

// refusedObjects are the routes accepted by no parent, the Gateways and
// ListenerSets not accepted, and the policies (of every kind) some Gateway
// reports as Conflicted (conflicts are decided once for every Gateway).
func refusedObjects(statuses []client.Object) map[string]bool {
	out := map[string]bool{}
	accepted := string(gatewayv1.GatewayConditionAccepted)
	for _, o := range statuses {
		var refused bool
		switch s := o.(type) {
		case *gatewayv1.HTTPRoute:
			refused = !anyParentAccepted(s.Status.Parents)
		case *gatewayv1.GRPCRoute:
			refused = !anyParentAccepted(s.Status.Parents)
		case *gatewayv1.Gateway:
			refused = !meta.IsStatusConditionTrue(s.Status.Conditions, accepted)
		case *gatewayv1.ListenerSet:
			refused = !meta.IsStatusConditionTrue(s.Status.Conditions, accepted)
		case v1alpha1.PolicyWithStatus: // every kind of policy.Kinds
			refused = conflicted(s.PolicyStatus().Ancestors)
		}
		if refused {
			out[objectKey(o)] = true
		}
	}
	return out
}

func anyParentAccepted(ps []gatewayv1.RouteParentStatus) bool {
	for _, p := range ps {
		if meta.IsStatusConditionTrue(p.Conditions, string(gatewayv1.RouteConditionAccepted)) {
			return true
		}
	}
	return false
}

func conflicted(as []gatewayv1.PolicyAncestorStatus) bool {
	for _, a := range as {
		if c := meta.FindStatusCondition(a.Conditions, string(gatewayv1.PolicyConditionAccepted)); c != nil &&
			c.Status == metav1.ConditionFalse && c.Reason == string(gatewayv1.PolicyReasonConflicted) {
			return true
		}
	}
	return false
}

// invalidPolicy says whether package validation refuses a policy: it is
// refused wherever it targets, and claims nothing in conflicts.
func invalidPolicy(o client.Object) bool {
	if p, ok := o.(v1alpha1.Policy); ok {
		if k := policy.KindNamed(graph.PolicyKind(p)); k != nil {
			return k.Validate(p) != nil
		}
	}
	return false
}

// sortedGateways returns a rendering's Gateways in order.
func sortedGateways(res render.Result) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(res.Files))
	for k := range res.Files {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

// TestGeneratedSnapshotsReachRendering: most generated snapshots have a
// Gateway that renders and a route it accepts, so fuzzing and property
// runs spend their time in the renderer, not in refusals.
func TestGeneratedSnapshotsReachRendering(t *testing.T) {
	for name, size := range map[string]snapgen.Size{"small": snapgen.Small, "large": snapgen.Large} {
		const n = 200
		rendered, routes := 0, 0
		for seed := range uint64(n) {
			res := render.Render(snapgen.Generate(snapgen.FromSeed(seed), size, graph.DefaultControllerName).Input(), goldenTime)
			if len(res.Files) > 0 {
				rendered++
			}
			if refused := refusedObjects(res.Statuses); acceptsARoute(res.Statuses, refused) {
				routes++
			}
		}
		t.Logf("%s: %d of %d snapshots render a Gateway, %d accept a route", name, rendered, n, routes)
		if rendered < n*3/4 || routes < n*3/5 {
			t.Errorf("%s: %d of %d snapshots render a Gateway and %d accept a route; want 3/4 and 3/5", name, rendered, n, routes)
		}
	}
}

func acceptsARoute(statuses []client.Object, refused map[string]bool) bool {
	for _, o := range statuses {
		switch o.(type) {
		case *gatewayv1.HTTPRoute, *gatewayv1.GRPCRoute:
			if !refused[objectKey(o)] {
				return true
			}
		}
	}
	return false
}
