package controller

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/snapshot"
)

// watches maps every object a Gateway's graph reads to the Gateways it
// affects. Update events map both the old and the new object, so a route
// that moves between Gateways re-reconciles both.
func (r *GatewayReconciler) watches(b *builder.TypedBuilder[reconcile.Request]) *builder.TypedBuilder[reconcile.Request] {
	specChanged := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b = b.
		Watches(&gatewayv1.GatewayClass{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfClass)).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfService)).
		Watches(&discoveryv1.EndpointSlice{}, sliceHandler{r}).
		// Only the metadata of Secrets and ConfigMaps is cached (Referenced).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfSecret), builder.OnlyMetadata).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfConfigMap), builder.OnlyMetadata).
		Watches(&gatewayv1beta1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(r.allGateways)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allGateways), builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&v1alpha2.NginxProxy{}, handler.EnqueueRequestsFromMapFunc(r.gatewaysOfNginxProxy))
	for _, k := range routekind.Required() {
		b = b.Watches(k.New(), handler.EnqueueRequestsFromMapFunc(r.gatewaysOfRoute), specChanged)
	}
	for _, k := range policy.Kinds {
		if optionalKind(k) == "" {
			// What translation reads of a policy's status (WAF's records of
			// the bundles in force) counts as its spec.
			b = b.Watches(k.NewObject(), handler.EnqueueRequestsFromMapFunc(r.gatewaysOfPolicy(k)), builder.WithPredicates(policyVersionChanged(k)))
		}
	}
	for _, k := range graph.ExtensionFilterKinds {
		b = b.Watches(k.New(), handler.EnqueueRequestsFromMapFunc(r.gatewaysOfFilter), specChanged)
	}
	if r.Config.Notifier != nil {
		// A data plane's report concerns its Gateway only; fetched bundles
		// (Notify) may concern any.
		b = b.WatchesRawSource(r.Config.Notifier.GatewaySource(r.allGateways, r.dataPlaneReported))
	}
	return b
}

// optionalWatches watch the kinds of the optional APIs, once their CRDs
// are installed (at start or later).
func (r *GatewayReconciler) optionalWatches(mgr ctrl.Manager, c controller.Controller) error {
	specChanged := predicate.GenerationChangedPredicate{}
	w := optionalWatcher{mgr: mgr, c: c, apis: r.Config.APIs}
	for _, k := range policy.Kinds {
		if api := optionalKind(k); api != "" {
			if err := w.watch(api, k.NewObject(), handler.EnqueueRequestsFromMapFunc(r.gatewaysOfPolicy(k)), policyVersionChanged(k)); err != nil {
				return err
			}
		}
	}
	if err := w.watch(apis.ListenerSet, &gatewayv1.ListenerSet{}, handler.EnqueueRequestsFromMapFunc(gatewayOfListenerSet), specChanged); err != nil {
		return err
	}
	for _, k := range routekind.Optional() {
		if err := w.watch(apis.RouteAPI(k), k.New(), handler.EnqueueRequestsFromMapFunc(r.gatewaysOfRoute), specChanged); err != nil {
			return err
		}
	}
	return w.watchPLM(r.Config, handler.EnqueueRequestsFromMapFunc(r.allGateways))
}

func (r *GatewayReconciler) gatewaysMatching(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	list := &gatewayv1.GatewayList{}
	if err := r.List(ctx, list, opts...); err != nil {
		log.FromContext(ctx).Error(err, "listing Gateways to reconcile")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, gw := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&gw)})
	}
	return reqs
}

// dataPlaneReported handles a data plane's report on its Gateway (a pod
// applied or refused a configuration, came or went): what changes is the
// Gateway's and its ListenerSets' Programmed, which the status job of the
// Gateway's last reconcile writes from the data plane's state when it
// runs, so that job runs again, and the Gateway is not reconciled (no
// snapshot, no translation lookup, no publish). Only a Gateway without such
// a job yet (none reconciled since the manager started) is reconciled.
func (r *GatewayReconciler) dataPlaneReported(_ context.Context, gw types.NamespacedName) []reconcile.Request {
	if r.repeatStatuses(gw) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: gw}}
}

func (r *GatewayReconciler) allGateways(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.gatewaysMatching(ctx)
}

func (r *GatewayReconciler) gatewaysOfClass(ctx context.Context, o client.Object) []reconcile.Request {
	return r.gatewaysMatching(ctx, client.MatchingFields{snapshot.IndexGatewayClass: o.GetName()})
}

func (r *GatewayReconciler) gatewaysOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	if r.Provisioning != nil && slices.Contains(r.Provisioning.PullSecrets, client.ObjectKeyFromObject(o)) {
		return r.allGateways(ctx, o) // every data plane has a copy
	}
	if r.Config.served(apis.BackendTLSPolicy) && backendTLSCA(ctx, r.Client, o, "Secret") {
		return r.allGateways(ctx, o)
	}
	secret := snapshot.NsName(o.GetNamespace(), o.GetName())
	reqs := r.gatewaysMatching(ctx, client.MatchingFields{snapshot.IndexGatewaySecret: secret})
	if r.Config.served(apis.ListenerSet) {
		reqs = append(reqs, r.gatewaysOfListenerSets(ctx, client.MatchingFields{snapshot.IndexListenerSetSecret: secret})...)
	}
	for _, f := range filtersOfSecret(ctx, r.Client, secret) {
		reqs = append(reqs, r.gatewaysOfFilter(ctx, f)...)
	}
	return reqs
}

// filtersOfSecret are the filters (of graph.ExtensionFilterKinds) that
// read the Secret.
func filtersOfSecret(ctx context.Context, c client.Reader, secret string) []client.Object {
	var out []client.Object
	for _, k := range graph.ExtensionFilterKinds {
		list := k.NewList()
		if err := c.List(ctx, list, client.MatchingFields{snapshot.IndexFilterSecret: secret}, client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "listing the filters of a Secret", "secret", secret)
			continue
		}
		out = append(out, k.Items(list)...)
	}
	return out
}

// gatewaysOfFilter are the Gateways of the routes whose rules name a filter.
func (r *GatewayReconciler) gatewaysOfFilter(ctx context.Context, o client.Object) []reconcile.Request {
	k := graph.ExtensionFilterKindOf(o)
	if k == nil {
		return nil
	}
	ref := graph.ObjectRef{Kind: k.Kind, Key: client.ObjectKeyFromObject(o)}
	var kinds []*routekind.Kind // the kinds whose rules have filters, and that index
	for _, rk := range r.Config.routeKinds() {
		if rk.ExtensionRefs != nil {
			kinds = append(kinds, rk)
		}
	}
	routes, err := snapshot.ListRoutes(ctx, r.Client, kinds, client.MatchingFields{snapshot.IndexRouteFilter: ref.String()}, client.UnsafeDisableDeepCopy)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the routes of a filter", "filter", ref.String())
		return nil
	}
	var reqs []reconcile.Request
	seen := map[reconcile.Request]bool{}
	for _, route := range routes {
		for _, req := range r.gatewaysOfRoute(ctx, route) {
			if !seen[req] {
				seen[req] = true
				reqs = append(reqs, req)
			}
		}
	}
	return reqs
}

// gatewayOfListenerSet is the Gateway a ListenerSet names as its parent.
func gatewayOfListenerSet(_ context.Context, o client.Object) []reconcile.Request {
	ls, ok := o.(*gatewayv1.ListenerSet)
	if !ok {
		return nil
	}
	if gw := graph.ListenerSetParent(ls); gw.Name != "" {
		return []reconcile.Request{{NamespacedName: gw}}
	}
	return nil
}

// gatewaysOfListenerSets are the parent Gateways of the ListenerSets matching opts.
func (r *GatewayReconciler) gatewaysOfListenerSets(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	list := &gatewayv1.ListenerSetList{}
	if err := r.List(ctx, list, opts...); err != nil {
		log.FromContext(ctx).Error(err, "listing ListenerSets")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		reqs = append(reqs, gatewayOfListenerSet(ctx, &list.Items[i])...)
	}
	return reqs
}

func (r *GatewayReconciler) gatewaysOfConfigMap(ctx context.Context, o client.Object) []reconcile.Request {
	if r.Config.served(apis.BackendTLSPolicy) && backendTLSCA(ctx, r.Client, o, "ConfigMap") {
		return r.allGateways(ctx, o)
	}
	return r.gatewaysMatching(ctx, client.MatchingFields{snapshot.IndexGatewayConfigMap: snapshot.NsName(o.GetNamespace(), o.GetName())})
}

// backendTLSCA says whether a BackendTLSPolicy takes CA certificates from
// the ConfigMap or Secret (kind) o.
func backendTLSCA(ctx context.Context, c client.Reader, o client.Object, kind string) bool {
	list := &gatewayv1.BackendTLSPolicyList{}
	if err := c.List(ctx, list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing BackendTLSPolicies")
		return false
	}
	for _, p := range list.Items {
		for _, ref := range p.Spec.Validation.CACertificateRefs {
			if ref.Group == "" && string(ref.Kind) == kind && string(ref.Name) == o.GetName() {
				return true
			}
		}
	}
	return false
}

func (r *GatewayReconciler) gatewaysOfRoute(ctx context.Context, o client.Object) []reconcile.Request {
	gws := routeGatewayKeys(ctx, r.Client, r.Config, o)
	reqs := make([]reconcile.Request, 0, len(gws))
	for _, gw := range gws {
		reqs = append(reqs, reconcile.Request{NamespacedName: gw})
	}
	return reqs
}

// routeGatewayKeys are the Gateways a route names, directly or through
// ListenerSets, or has Gatewall status from.
func routeGatewayKeys(ctx context.Context, c client.Reader, cfg Config, o client.Object) []types.NamespacedName {
	var gws, sets []string
	if k := routekind.Of(o); k != nil {
		spec, st := k.Common(o)
		gws = snapshot.RouteGateways(o.GetNamespace(), spec.ParentRefs, st.Parents, cfg.ControllerName)
		sets = snapshot.RouteListenerSets(o.GetNamespace(), spec.ParentRefs, st.Parents, cfg.ControllerName)
	}
	out := make([]types.NamespacedName, 0, len(gws))
	for _, gw := range gws {
		ns, name := snapshot.SplitNsName(gw)
		out = append(out, types.NamespacedName{Namespace: ns, Name: name})
	}
	if !cfg.served(apis.ListenerSet) {
		return out
	}
	for _, s := range sets {
		ns, name := snapshot.SplitNsName(s)
		ls := &gatewayv1.ListenerSet{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ls); err != nil {
			if client.IgnoreNotFound(err) != nil {
				log.FromContext(ctx).Error(err, "reading a route's ListenerSet", "listenerSet", s)
			}
			continue
		}
		if gw := graph.ListenerSetParent(ls); gw.Name != "" {
			out = append(out, gw)
		}
	}
	return out
}

func (r *GatewayReconciler) gatewaysOfService(ctx context.Context, o client.Object) []reconcile.Request {
	return r.gatewaysOfServiceKey(ctx, snapshot.NsName(o.GetNamespace(), o.GetName()))
}

func (r *GatewayReconciler) gatewaysOfSlice(ctx context.Context, o client.Object) []reconcile.Request {
	svc := o.GetLabels()[discoveryv1.LabelServiceName]
	if svc == "" {
		return nil
	}
	if c := r.Config.Translations; c != nil {
		// The translations say which Gateways read the Service's slices:
		// no walk through the routes of a Service thousands of routes use
		// (a third of the manager's CPU during make scale's pod churn at
		// 5,000 routes, even without copying them).
		var reqs []reconcile.Request
		for _, gw := range c.GatewaysUsing(types.NamespacedName{Namespace: o.GetNamespace(), Name: svc}) {
			reqs = append(reqs, reconcile.Request{NamespacedName: gw})
		}
		return reqs
	}
	return r.gatewaysOfServiceKey(ctx, snapshot.NsName(o.GetNamespace(), svc))
}

func (r *GatewayReconciler) gatewaysOfServiceKey(ctx context.Context, svc string) []reconcile.Request {
	// Thousands of routes may use one Service, and each of its pods' changes
	// maps here: the cache's routes are read, not copied (copying 5,000
	// HTTPRoutes per EndpointSlice event was 45% of the manager's CPU
	// during make scale's pod churn).
	routes, err := snapshot.ListRoutes(ctx, r.Client, r.Config.routeKinds(), client.MatchingFields{snapshot.IndexRouteService: svc}, client.UnsafeDisableDeepCopy)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing routes of a Service", "service", svc)
		return nil
	}
	seen := map[reconcile.Request]bool{}
	var reqs []reconcile.Request
	for _, route := range routes {
		for _, req := range r.gatewaysOfRoute(ctx, route) {
			if !seen[req] {
				seen[req] = true
				reqs = append(reqs, req)
			}
		}
	}
	return reqs
}

// gatewaysOfPolicy finds the Gateways the targets of a policy of a kind
// are, attach to, or (Services) are proxied to by.
func (r *GatewayReconciler) gatewaysOfPolicy(k policy.Kind) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		gws, err := ancestorGateways(ctx, r.Client, r.Config, targetsOf(k, o))
		if err != nil {
			log.FromContext(ctx).Error(err, "finding the Gateways of a policy")
		}
		reqs := make([]reconcile.Request, 0, len(gws))
		for _, gw := range gws {
			reqs = append(reqs, reconcile.Request{NamespacedName: gw})
		}
		return reqs
	}
}

// gatewaysOfNginxProxy finds the Gateways that use an NginxProxy directly or
// through their class.
func (r *GatewayReconciler) gatewaysOfNginxProxy(ctx context.Context, o client.Object) []reconcile.Request {
	reqs := r.gatewaysMatching(ctx, client.MatchingFields{snapshot.IndexGatewayNginxProxy: snapshot.NsName(o.GetNamespace(), o.GetName())})
	classes := &gatewayv1.GatewayClassList{}
	if err := r.List(ctx, classes); err != nil {
		log.FromContext(ctx).Error(err, "listing GatewayClasses")
		return reqs
	}
	for _, c := range classes.Items {
		ref := c.Spec.ParametersRef
		if ref != nil && ref.Kind == "NginxProxy" && ref.Name == o.GetName() && ref.Namespace != nil && string(*ref.Namespace) == o.GetNamespace() {
			reqs = append(reqs, r.gatewaysOfClass(ctx, &c)...)
		}
	}
	return reqs
}
