// Package snapshot reads from the manager's cache what translating a
// Gateway needs, into a graph.Input: the field indexes that find one
// Gateway's objects (Index*, Indexes), the Secrets and ConfigMaps Gateways
// reference (Referenced: their content read from the API server and kept
// while used), and a Gateway's snapshot (Reader.Gateway). It reads and
// decides nothing: translation (package translate) decides.
package snapshot

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	apiplm "github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	wafv1alpha1 "github.com/gatewall/gatewall/api/plm/waf/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/wafbundles"
)

// Reader reads snapshots from the manager's cache (Client) and the
// Secrets and ConfigMaps they reference (Referenced), as the manager's
// configuration says: the kinds whose CRD is installed now, and its PLM
// and WAF settings.
type Reader struct {
	Client         client.Reader
	ControllerName string
	Referenced     *Referenced
	// Bundles, when set, adds what the fetcher has of the WAF policies'
	// bundles to policy snapshots.
	Bundles *wafbundles.Bundles
	// RouteKinds and PolicyKinds are the route and policy kinds whose CRD
	// is installed now; ListenerSets says whether the ListenerSet CRD is.
	RouteKinds   func() []*routekind.Kind
	PolicyKinds  func() []policy.Kind
	ListenerSets func() bool
	// PLMGroup is the API group of the PLM objects in use ("" while no PLM
	// CRD is installed); PLMScope is where their bundles may be fetched
	// from, WAFModule the App Protect module's path for nginx.conf.
	PLMGroup  func() string
	PLMScope  apiplm.Scope
	WAFModule string
	// Snippets says the installation enables snippets (--snippets).
	Snippets bool
}

// Settings sets what the configuration tells a snapshot about PLM and
// WAF (the API group of its objects, where their bundles may come from,
// the App Protect module's path) and whether snippets are enabled.
func (r Reader) Settings(in *graph.Input) {
	in.PLMGroup = r.PLMGroup()
	in.PLMScope = r.PLMScope
	in.WAFModule = r.WAFModule
	in.Snippets = r.Snippets
}

// Gateway reads from the cache what the graph of one Gateway needs: its
// class, the ListenerSets that name it, the routes that name either, the
// Services, EndpointSlices, Secrets and ConfigMaps those reference, the
// (few) ReferenceGrants, Namespaces and NginxProxies, and every policy
// (AddPolicies).
//
// The Secrets and ConfigMaps come from Referenced, which keeps their
// content while the Gateway's last snapshot read them.
func (r Reader) Gateway(ctx context.Context, gw *gatewayv1.Gateway) (*graph.Input, error) {
	c := r.Client
	refs := r.Referenced.reads()
	defer refs.done(client.ObjectKeyFromObject(gw))
	in := graph.NewInput(r.ControllerName)
	r.Settings(in)
	in.Add(gw)
	get := func(key types.NamespacedName, obj client.Object) error {
		if err := c.Get(ctx, key, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("reading %T %s: %w", obj, key, err)
		}
		in.Add(obj)
		return nil
	}
	if err := get(types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, &gatewayv1.GatewayClass{}); err != nil {
		return nil, err
	}
	gwKey := NsName(gw.Namespace, gw.Name)
	services := map[string]bool{}
	if err := r.addRoutes(ctx, in, services, client.MatchingFields{IndexRouteGateway: gwKey}); err != nil {
		return nil, err
	}
	secrets := GatewaySecrets(gw)
	if r.ListenerSets() {
		sets := &gatewayv1.ListenerSetList{}
		if err := c.List(ctx, sets, client.MatchingFields{IndexListenerSetGateway: gwKey}); err != nil {
			return nil, fmt.Errorf("listing ListenerSets: %w", err)
		}
		for i := range sets.Items {
			ls := &sets.Items[i]
			in.Add(ls)
			secrets = append(secrets, ListenerSetSecrets(ls)...)
			if err := r.addRoutes(ctx, in, services, client.MatchingFields{IndexRouteListenerSet: NsName(ls.Namespace, ls.Name)}); err != nil {
				return nil, err
			}
		}
	}
	for s := range services {
		ns, name := SplitNsName(s)
		if err := get(types.NamespacedName{Namespace: ns, Name: name}, &corev1.Service{}); err != nil {
			return nil, err
		}
		if _, err := r.AddSlices(ctx, in, types.NamespacedName{Namespace: ns, Name: name}); err != nil {
			return nil, err
		}
	}
	if err := r.addFilters(ctx, in, refs); err != nil {
		return nil, err
	}
	for _, s := range secrets {
		ns, name := SplitNsName(s)
		if err := addReferenced(ctx, in, refs.secret, types.NamespacedName{Namespace: ns, Name: name}); err != nil {
			return nil, err
		}
	}
	for _, cm := range GatewayConfigMaps(gw) {
		ns, name := SplitNsName(cm)
		if err := addReferenced(ctx, in, refs.configMap, types.NamespacedName{Namespace: ns, Name: name}); err != nil {
			return nil, err
		}
	}
	for _, l := range []client.ObjectList{&corev1.NamespaceList{}, &v1alpha2.NginxProxyList{}} {
		if err := AddList(ctx, c, in, l); err != nil {
			return nil, err
		}
	}
	if err := r.AddPolicies(ctx, in); err != nil {
		return nil, err
	}
	if err := addBackendTLSCAs(ctx, in, refs); err != nil {
		return nil, err
	}
	return in, nil
}

// AddSlices adds the EndpointSlices of a Service from the cache, and
// returns them.
func (r Reader) AddSlices(ctx context.Context, in *graph.Input, svc types.NamespacedName) ([]*discoveryv1.EndpointSlice, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := r.Client.List(ctx, list, client.InNamespace(svc.Namespace), client.MatchingFields{IndexSliceService: svc.String()}); err != nil {
		return nil, fmt.Errorf("listing EndpointSlices of %s: %w", svc, err)
	}
	added := make([]*discoveryv1.EndpointSlice, 0, len(list.Items))
	for i := range list.Items {
		in.Add(&list.Items[i])
		added = append(added, &list.Items[i])
	}
	return added, nil
}

// addFilters adds the filters the snapshot's routes name in ExtensionRef
// filters (of the kinds of graph.ExtensionFilterKinds), and the Secrets
// those read, whose content comes from Referenced.
func (r Reader) addFilters(ctx context.Context, in *graph.Input, refs *refReads) error {
	wanted := map[graph.ObjectRef]*graph.ExtensionFilterKind{}
	for _, routes := range in.Routes {
		for _, route := range routes {
			for _, ref := range RouteFilters(route) {
				k := graph.ExtensionFilterKindNamed(ref.Kind)
				wanted[ref] = k
			}
		}
	}
	for ref, k := range wanted {
		o := k.New()
		if err := r.Client.Get(ctx, ref.Key, o); err != nil {
			if apierrors.IsNotFound(err) {
				continue // the rules naming it answer 500, and say why
			}
			return fmt.Errorf("reading %s: %w", ref, err)
		}
		in.Add(o)
		for _, s := range k.Secrets(o) {
			if err := addReferenced(ctx, in, refs.secret, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// RouteFilters are the filters of graph.ExtensionFilterKinds a route's
// rules name in ExtensionRef filters, in the route's namespace.
func RouteFilters(route client.Object) []graph.ObjectRef {
	k := routekind.Of(route)
	if k == nil || k.ExtensionRefs == nil {
		return nil
	}
	var out []graph.ObjectRef
	for _, ref := range k.ExtensionRefs(route) {
		if fk := graph.ExtensionFilterKindFor(string(ref.Group), string(ref.Kind)); fk != nil {
			out = append(out, graph.ObjectRef{Kind: fk.Kind, Key: types.NamespacedName{Namespace: route.GetNamespace(), Name: string(ref.Name)}})
		}
	}
	return out
}

// addReferenced adds the Secret or ConfigMap read returns, if it exists.
func addReferenced[T client.Object](ctx context.Context, in *graph.Input, read func(context.Context, types.NamespacedName) (T, error), key types.NamespacedName) error {
	o, err := read(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	in.Add(o)
	return nil
}

// addRoutes adds the routes of every kind whose CRD is served matching
// opts, and records the Services they use.
//
// The routes are the cache's own objects, not copies (UnsafeDisableDeepCopy):
// copying 5,000 HTTPRoutes was a seventh of the manager's CPU while routes
// changed. Nothing may modify them: translation and the status functions
// only read their input (render's property checkInputUnchanged), and
// status writes start from a fresh copy (statuswrite.WriteRouteParents).
func (r Reader) addRoutes(ctx context.Context, in *graph.Input, services map[string]bool, opts client.ListOption) error {
	routes, err := ListRoutes(ctx, r.Client, r.RouteKinds(), opts, client.UnsafeDisableDeepCopy)
	if err != nil {
		return err
	}
	for _, route := range routes {
		in.Add(route)
		for _, s := range RouteServices(routekind.Of(route), route) {
			services[s] = true
		}
	}
	return nil
}

// addBackendTLSCAs adds the ConfigMaps and Secrets the snapshot's
// BackendTLSPolicies take CA certificates from.
func addBackendTLSCAs(ctx context.Context, in *graph.Input, refs *refReads) error {
	for _, p := range in.BackendTLSPolicies {
		for _, ref := range p.Spec.Validation.CACertificateRefs {
			k := types.NamespacedName{Namespace: p.Namespace, Name: string(ref.Name)}
			var err error
			switch {
			case ref.Group != "":
			case ref.Kind == "ConfigMap":
				err = addReferenced(ctx, in, refs.configMap, k)
			case ref.Kind == "Secret":
				err = addReferenced(ctx, in, refs.secret, k)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// AddPolicies adds every policy of every kind of policy.Kinds whose CRD is
// installed (policies are few; conflicts are decided across all of them),
// every PLM object of the group in use, every ReferenceGrant, and what the
// fetcher has of the WAF policies' bundles.
func (r Reader) AddPolicies(ctx context.Context, in *graph.Input) error {
	if err := r.listPolicies(ctx, in); err != nil {
		return err
	}
	if r.Bundles != nil {
		r.Bundles.Fill(in)
	}
	return nil
}

// listPolicies adds what AddPolicies lists.
func (r Reader) listPolicies(ctx context.Context, in *graph.Input) error {
	lists := []client.ObjectList{&gatewayv1beta1.ReferenceGrantList{}}
	for _, k := range r.PolicyKinds() {
		lists = append(lists, k.NewList())
	}
	lists = append(lists, PLMLists(r.PLMGroup())...)
	for _, l := range lists {
		if err := AddList(ctx, r.Client, in, l); err != nil {
			return err
		}
	}
	return nil
}

// PLMLists are empty lists of the PLM kinds of a group.
func PLMLists(group string) []client.ObjectList {
	switch group {
	case appprotectv1.GroupVersion.Group:
		return []client.ObjectList{&appprotectv1.APPolicyList{}, &appprotectv1.APLogConfList{}}
	case wafv1alpha1.GroupVersion.Group:
		return []client.ObjectList{&wafv1alpha1.APPolicyList{}, &wafv1alpha1.APLogConfList{}}
	}
	return nil
}

// SplitNsName splits a "namespace/name" key (NsName).
func SplitNsName(s string) (string, string) {
	ns, name, _ := strings.Cut(s, "/")
	return ns, name
}

// AddList adds every object of a list to the snapshot.
func AddList(ctx context.Context, c client.Reader, in *graph.Input, l client.ObjectList) error {
	if err := c.List(ctx, l); err != nil {
		return fmt.Errorf("listing %T: %w", l, err)
	}
	return meta.EachListItem(l, func(o runtime.Object) error {
		in.Add(o)
		return nil
	})
}
