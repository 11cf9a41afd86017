package controller

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses;gateways;listenersets;httproutes;grpcroutes;referencegrants,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses/status;gateways/status;listenersets/status;httproutes/status;grpcroutes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=services;secrets;namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch

// GatewayReconciler is the shared reconciler: one reconcile per Gateway reads
// what concerns the Gateway from the cache, builds its graph, renders its
// NGINX configuration, hands it to the data plane, and writes the Gateway's
// status and its routes' parent statuses.
type GatewayReconciler struct {
	client.Client
	Config    Config
	DataPlane DataPlane
	// Provisioning, when set, makes the reconciler provision each accepted
	// Gateway's data plane; nil leaves data planes to someone else.
	Provisioning *Provisioning
	// RouteStatuses, when set, writes route statuses in the background;
	// nil writes them during the reconcile.
	RouteStatuses *RouteStatusWriter

	// translations keep each Gateway's last translation and the
	// fingerprint of its input: a reconcile whose input did not change
	// (one woken by its data plane's answer, say) reuses it instead of
	// translating thousands of routes again.
	translationsMu sync.Mutex
	translations   map[types.NamespacedName]translated
}

type translated struct {
	fingerprint [sha256.Size]byte
	t           *translate.Translation
}

// translate translates the Gateway, or returns its last translation when
// the input is the same.
func (r *GatewayReconciler) translate(in *graph.Input, key types.NamespacedName) *translate.Translation {
	fp, ok := in.Fingerprint()
	r.translationsMu.Lock()
	last, found := r.translations[key]
	r.translationsMu.Unlock()
	if ok && found && last.fingerprint == fp {
		return last.t
	}
	t := translate.Gateway(in, key)
	r.translationsMu.Lock()
	defer r.translationsMu.Unlock()
	if r.translations == nil {
		r.translations = map[types.NamespacedName]translated{}
	}
	if ok && t != nil {
		r.translations[key] = translated{fingerprint: fp, t: t}
	} else {
		delete(r.translations, key)
	}
	return t
}

// newest is the snapshot's copy of a route, whose status is the newest
// seen (a reused translation holds older copies), or route if it has none.
func newest(in *graph.Input, route client.Object) client.Object {
	k := client.ObjectKeyFromObject(route)
	switch route.(type) {
	case *gatewayv1.HTTPRoute:
		if o := in.HTTPRoutes[k]; o != nil {
			return o
		}
	case *gatewayv1.GRPCRoute:
		if o := in.GRPCRoutes[k]; o != nil {
			return o
		}
	}
	return route
}

// forgetTranslation drops a Gateway's last translation.
func (r *GatewayReconciler) forgetTranslation(key types.NamespacedName) {
	r.translationsMu.Lock()
	defer r.translationsMu.Unlock()
	delete(r.translations, key)
}

// Reconcile handles one Gateway.
func (r *GatewayReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	start := time.Now()
	defer func() { logger.V(1).Info("Gateway reconciled", "took", time.Since(start).String()) }()
	gw := &gatewayv1.Gateway{}
	if err := r.Get(ctx, req.NamespacedName, gw); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.DataPlane.Forget(req.NamespacedName)
		r.forgetTranslation(req.NamespacedName)
		return ctrl.Result{}, r.clearRouteStatuses(ctx, req.NamespacedName)
	}
	in, err := snapshot(ctx, r.Client, r.Config, gw)
	if err != nil {
		return ctrl.Result{}, err
	}
	read := time.Now()
	t := r.translate(in, req.NamespacedName)
	translated := time.Now()
	if t == nil {
		// Not (or no longer) a Gatewall Gateway: leave no state behind,
		// and no data plane serving it.
		r.DataPlane.Forget(req.NamespacedName)
		if r.Provisioning != nil {
			if err := r.deprovision(ctx, gw); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.clearRouteStatuses(ctx, req.NamespacedName)
	}
	g := t.Graph
	// A Gateway that is not valid (a bad NginxProxy edit, a broken
	// parametersRef, no valid listener) keeps its data plane and the last
	// good configuration published, so that it keeps serving, and pods that
	// start meanwhile get that configuration, until it is fixed (then
	// provisioned and published again) or deleted (its objects are then
	// garbage collected through their owner references; a Gateway being
	// deleted is not provisioned again meanwhile).
	prov := provisioned{addresses: gw.Status.Addresses}
	if r.Provisioning != nil && g.Valid && gw.DeletionTimestamp == nil {
		if prov, err = r.provision(ctx, g); err != nil {
			return ctrl.Result{}, err
		}
	}
	dp := status.DataPlane{State: status.Pending}
	if t.Files != nil {
		version := r.DataPlane.Publish(req.NamespacedName, t.Files)
		dp = r.DataPlane.State(req.NamespacedName, version)
		logger.V(1).Info("configuration published", "version", version, "routes", len(g.Routes),
			"snapshot", read.Sub(start).String(), "translation", translated.Sub(read).String(), "published", time.Since(start).String())
	}
	now := metav1.Now()
	if err := r.writeGatewayStatus(ctx, g, dp, prov.addresses, prov.problem, t.Extra(t.GatewayRef()), now); err != nil {
		return ctrl.Result{}, err
	}
	owner := parentOwner{controllerName: r.Config.ControllerName, gateway: req.NamespacedName, sets: map[types.NamespacedName]bool{}}
	for _, ls := range g.ListenerSets {
		owner.sets[ls.Key] = true
		if err := r.writeListenerSetStatus(ctx, ls, dp, now); err != nil {
			return ctrl.Result{}, err
		}
	}
	current := map[routeID]bool{}
	for _, route := range g.Routes {
		current[idOf(route.Source)] = true
		parents := status.RouteParents(route, r.Config.ControllerName, t.Extra(translate.RouteRef(route)), routeParents(newest(in, route.Source)), now)
		if err := r.setRouteParents(ctx, route.Source, owner, parents); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: prov.retryAfter}, r.clearRouteParents(ctx, owner, current)
}

// setRouteParents makes ours a route's parent statuses owned by owner.
func (r *GatewayReconciler) setRouteParents(ctx context.Context, route client.Object, owner parentOwner, ours []gatewayv1.RouteParentStatus) error {
	if r.RouteStatuses != nil {
		r.RouteStatuses.set(route, owner, ours)
		return nil
	}
	return writeRouteParents(ctx, r.Client, route, owner, ours)
}

// clearRouteParents removes owner's parent statuses from its routes but
// those in keep.
func (r *GatewayReconciler) clearRouteParents(ctx context.Context, owner parentOwner, keep map[routeID]bool) error {
	if r.RouteStatuses != nil {
		return r.RouteStatuses.clear(ctx, owner, keep, routeQueries(owner)...)
	}
	return clearRouteParents(ctx, r.Client, owner, keep, routeQueries(owner)...)
}

// clearRouteStatuses removes the parent statuses Gatewall wrote for a
// Gateway that is gone or no longer Gatewall's, and for the ListenerSets
// that name it, from every route.
func (r *GatewayReconciler) clearRouteStatuses(ctx context.Context, gw types.NamespacedName) error {
	owner := parentOwner{controllerName: r.Config.ControllerName, gateway: gw, sets: map[types.NamespacedName]bool{}}
	if r.Config.ListenerSets {
		sets := &gatewayv1.ListenerSetList{}
		if err := r.List(ctx, sets, client.MatchingFields{indexListenerSetGateway: gw.String()}); err != nil {
			return fmt.Errorf("listing ListenerSets: %w", err)
		}
		for _, ls := range sets.Items {
			owner.sets[client.ObjectKeyFromObject(&ls)] = true
		}
	}
	return r.clearRouteParents(ctx, owner, nil)
}

// routeQueries find the routes that may hold an owner's parent statuses.
func routeQueries(owner parentOwner) []client.MatchingFields {
	qs := []client.MatchingFields{{indexRouteGateway: owner.gateway.String()}}
	for k := range owner.sets {
		qs = append(qs, client.MatchingFields{indexRouteListenerSet: k.String()})
	}
	return qs
}

// gatewayWorkers reconcile different Gateways at once (one Gateway is never
// reconciled twice at once): a change to a route with many parents, or a
// restart, reaches every Gateway in parallel instead of one after another.
// What the reconciles share (the agent server, the bundles, the notifier,
// the route status writer) is safe for concurrent use.
const gatewayWorkers = 4

// SetupWithManager registers the reconciler, its indexes and its watches.
func (r *GatewayReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := setupIndexes(context.Background(), mgr, r.Config); err != nil {
		return err
	}
	// Gateways and routes matter when their spec changes; their status is Gatewall's own writing.
	b := ctrl.NewControllerManagedBy(mgr).For(&gatewayv1.Gateway{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.Provisioning != nil {
		// Drift in a data plane's objects, and its Service's address, reconcile the Gateway.
		b = b.Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ServiceAccount{}).Owns(&corev1.ConfigMap{}).
			Owns(&corev1.Secret{}) // the agents' CA
	}
	return r.watches(b).
		Named("gateway").
		WithOptions(controller.Options{MaxConcurrentReconciles: gatewayWorkers}).
		Complete(r)
}
