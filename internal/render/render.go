// Package render is the offline renderer behind `gatewall render`: it reads
// manifests from files, builds every Gatewall Gateway's graph and NGINX
// configuration with the same core the manager uses, and writes the files
// each data plane would receive plus the statuses Gatewall would set. Users
// preview changes with it; golden tests are driven by it.
//
// Readable input never fails the whole preview: an object that does not
// decode into its kind is refused and reported (Decode), and what the
// offline setting cannot do (fetch a WAF bundle) is said in status.
package render

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// Result is what rendering a snapshot produces.
type Result struct {
	// Files are each valid Gateway's data-plane files, but for those held.
	Files map[types.NamespacedName][]config.File
	// Endpoints are each valid Gateway's dynamic endpoints, which its data
	// plane receives apart from the files.
	Endpoints map[types.NamespacedName]endpoints.Set
	// Resolvers are how the data plane of each Gateway with endpoints
	// resolves their DNS names, when its NginxProxy says (dnsResolver).
	Resolvers map[types.NamespacedName]endpoints.Resolver
	// KeySources are the remote JWT key sets each Gateway's data plane
	// fetches, when its filters have some.
	KeySources map[types.NamespacedName]endpoints.KeySources
	// Held are the Gateways whose configuration the manager would hold
	// back, with why (translate.Translation.HeldMessage): their files are
	// not written, as the manager would not push them.
	Held map[types.NamespacedName]string
	// Statuses are the objects whose status Gatewall sets, with that status,
	// sorted by kind, namespace and name.
	Statuses []client.Object
}

// Render renders every Gateway of a class Gatewall serves. now stamps the
// conditions' transition times.
func Render(in *graph.Input, now metav1.Time) Result {
	standard, _ := Serves(ChannelStandard)
	return RenderFor(in, now, standard)
}

// RenderFor renders as Render does for a cluster that serves what serves
// says (the GatewayClass's supported features follow it: Serves).
func RenderFor(in *graph.Input, now metav1.Time, serves func(status.Requirement) bool) Result {
	in = withOfflineBundles(in)
	res := Result{Files: map[types.NamespacedName][]config.File{}, Endpoints: map[types.NamespacedName]endpoints.Set{},
		Resolvers: map[types.NamespacedName]endpoints.Resolver{}, KeySources: map[types.NamespacedName]endpoints.KeySources{},
		Held: map[types.NamespacedName]string{}}
	classes := map[string]bool{}
	routeParents := map[string][]gatewayv1.RouteParentStatus{}
	routeObjs := map[string]client.Object{}
	var translations []*translate.Translation
	keys := make([]types.NamespacedName, 0, len(in.Gateways))
	for k := range in.Gateways {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		t := translate.Gateway(in, k)
		if t == nil {
			continue
		}
		translations = append(translations, t)
		g := t.Graph
		classes[g.Class.Source.Name] = true
		if t.Files != nil {
			res.Files[k] = t.Files
			res.Endpoints[k] = t.Endpoints
			if !reflect.DeepEqual(t.Resolver, endpoints.Resolver{}) {
				res.Resolvers[k] = t.Resolver
			}
			if t.KeySources != nil {
				res.KeySources[k] = t.KeySources
			}
		}
		dp := status.Offline
		if held := t.HeldMessage(); held != "" {
			res.Held[k] = held
			dp = status.DataPlane{State: status.Pending, Message: held}
		}
		gw := g.Source.DeepCopy()
		gw.Status = status.Gateway(g, dp, nil, nil, t.Extra(t.GatewayRef()), gatewayv1.GatewayStatus{}, now)
		res.Statuses = append(res.Statuses, gw)
		for _, ls := range g.ListenerSets {
			c := ls.Source.DeepCopy()
			c.Status = status.ListenerSet(ls, dp, gatewayv1.ListenerSetStatus{}, now)
			res.Statuses = append(res.Statuses, c)
		}
		for _, r := range g.Routes {
			id := r.Kind + "/" + r.Key.String()
			routeObjs[id] = r.Source
			routeParents[id] = append(routeParents[id], status.RouteParents(r, in.ControllerName, t.Extra(translate.RouteRef(r)), nil, now)...)
		}
	}
	// Every class of this controller gets a status, as the manager gives
	// it, also one no rendered Gateway uses.
	for name, c := range in.GatewayClasses {
		if string(c.Spec.ControllerName) == in.ControllerName {
			classes[name] = true
		}
	}
	for name := range classes {
		c := graph.BuildGatewayClass(in, name)
		gc := c.Source.DeepCopy()
		gc.Status = status.GatewayClass(c, status.SupportedFeatures(serves), gatewayv1.GatewayClassStatus{}, now)
		res.Statuses = append(res.Statuses, gc)
	}
	// Every NginxProxy gets a status, as the manager gives it, whether or
	// not a class or Gateway names it.
	for _, np := range slices.Concat(slices.Collect(maps.Values(in.NginxProxies)), slices.Collect(maps.Values(in.UnreadableNginxProxies))) {
		c := np.DeepCopy()
		c.Status = status.NginxProxy(c, v1alpha2.NginxProxyStatus{}, now)
		res.Statuses = append(res.Statuses, c)
	}
	offline := func(gw types.NamespacedName) status.DataPlane {
		if held := res.Held[gw]; held != "" {
			return status.DataPlane{State: status.Pending, Message: held}
		}
		return status.Offline
	}
	for _, kind := range policy.Kinds {
		for _, p := range kind.Policies(in) {
			ancestors := translate.PolicyAncestors(kind, p, translations, in, offline)
			if len(ancestors) == 0 {
				continue
			}
			c := p.DeepCopyObject().(client.Object) // the object, not the view
			translate.SetPolicyStatus(kind, kind.View(c), translate.PolicyStatusOf{ControllerName: in.ControllerName, Ancestors: ancestors,
				Attachments: translate.Attachments(kind, translations), In: in}, now)
			res.Statuses = append(res.Statuses, c)
		}
	}
	// Every filter a route rule may name gets a status, as the manager
	// gives it, whether or not a rule names it.
	for _, k := range graph.ExtensionFilterKinds {
		for key, o := range in.Filters[k.Kind] {
			c := o.DeepCopyObject().(client.Object)
			*k.Controllers(c) = status.ExtensionFilter(graph.ResolveExtensionFilter(in, k.Kind, key), in.ControllerName, c.GetGeneration(), nil, now)
			res.Statuses = append(res.Statuses, c)
		}
	}
	for id, obj := range routeObjs {
		routeParents[id] = status.OrderRouteParents(obj, obj.GetNamespace(), routeParents[id], in.ControllerName)
		res.Statuses = append(res.Statuses, withRouteParents(obj, routeParents[id]))
	}
	sort.Slice(res.Statuses, func(i, j int) bool { return objectID(res.Statuses[i]) < objectID(res.Statuses[j]) })
	return res
}

// notInBundlesDir is the state of a bundle the policies want that the
// bundles given to render do not hold.
var notInBundlesDir = graph.Bundle{State: graph.BundlePending,
	Message: "not among the bundles given to render (--plm-bundles-dir); in a cluster, Gatewall fetches it from PLM storage"}

// withOfflineBundles returns the snapshot with every bundle the WAF
// policies want and render was not given marked as such: nothing fetches
// it offline, so "being fetched" would never end. in is not modified.
func withOfflineBundles(in *graph.Input) *graph.Input {
	out := *in
	out.Bundles = make(map[string]graph.Bundle, len(in.Bundles))
	for sha, b := range in.Bundles {
		out.Bundles[sha] = b
	}
	for _, r := range policy.WantedBundles(in) {
		if _, ok := out.Bundles[r.Sha256]; !ok {
			out.Bundles[r.Sha256] = notInBundlesDir
		}
	}
	return &out
}

func withRouteParents(obj client.Object, parents []gatewayv1.RouteParentStatus) client.Object {
	c := obj.DeepCopyObject().(client.Object)
	if !routekind.SetParents(c, parents) {
		panic(fmt.Sprintf("not a route: %T", obj))
	}
	return c
}

func objectID(o client.Object) string {
	return fmt.Sprintf("%T/%s/%s", o, o.GetNamespace(), o.GetName())
}
