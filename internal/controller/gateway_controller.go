package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses;gateways;listenersets;httproutes;grpcroutes;tlsroutes;referencegrants,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses/status;gateways/status;listenersets/status;httproutes/status;grpcroutes/status;tlsroutes/status,verbs=get;update;patch
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
	// RouteStatuses writes route statuses in the background.
	RouteStatuses *RouteStatusWriter
	// Recorder emits events on Gateways (nil: none).
	Recorder events.EventRecorder

	// dataPlaneEvents turns changes of data planes into events.
	dataPlaneEvents dataPlaneEvents
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
		r.dataPlaneEvents.forget(req.NamespacedName)
		metrics.ForgetGateway(req.NamespacedName)
		return ctrl.Result{}, r.clearRouteStatuses(ctx, req.NamespacedName)
	}
	in, err := snapshot(ctx, r.Client, r.Config, gw)
	if err != nil {
		return ctrl.Result{}, err
	}
	read := time.Now()
	t, statusesHanded := r.translate(in, req.NamespacedName)
	translated := time.Now()
	if t == nil {
		// Not (or no longer) a Gatewall Gateway: leave no state behind,
		// and no data plane serving it.
		r.DataPlane.Forget(req.NamespacedName)
		metrics.ForgetGateway(req.NamespacedName)
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
		recordConfiguration(req.NamespacedName, t.Files)
		dp = r.DataPlane.State(req.NamespacedName, version)
		logger.V(1).Info("configuration published", "version", version, "routes", len(g.Routes),
			"snapshot", read.Sub(start).String(), "translation", translated.Sub(read).String(), "published", time.Since(start).String())
	}
	now := metav1.Now()
	if err := r.writeGatewayStatus(ctx, g, dp, prov.addresses, prov.problem, t.Extra(t.GatewayRef()), now); err != nil {
		return ctrl.Result{}, err
	}
	emit(r.Recorder, gw, r.dataPlaneEvents.observe(req.NamespacedName, dp, prov.problem, prov.stalled))
	owner := parentOwner{controllerName: r.Config.ControllerName, gateway: req.NamespacedName, sets: map[types.NamespacedName]bool{}}
	for _, ls := range g.ListenerSets {
		owner.sets[ls.Key] = true
		if err := r.writeListenerSetStatus(ctx, ls, dp, now); err != nil {
			return ctrl.Result{}, err
		}
	}
	if statusesHanded {
		// The same input makes the same route statuses, and the writer has
		// them already: thousands of routes need not be gone through again.
		return ctrl.Result{RequeueAfter: prov.retryAfter}, nil
	}
	current := map[routeID]bool{}
	for _, route := range g.Routes {
		current[idOf(route.Source)] = true
		parents := status.RouteParents(route, r.Config.ControllerName, t.Extra(translate.RouteRef(route)), routeParents(newest(in, route.Source)), now)
		r.RouteStatuses.set(route.Source, owner, parents)
	}
	if err := r.RouteStatuses.clear(ctx, owner, current); err != nil {
		return ctrl.Result{}, err
	}
	r.routeStatusesHanded(req.NamespacedName, t)
	return ctrl.Result{RequeueAfter: prov.retryAfter}, nil
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
	return r.RouteStatuses.clear(ctx, owner, nil)
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
// the route status writer, the translations) is safe for concurrent use.
// A reconcile publishes within milliseconds of its start and then waits on
// the API server for the Gateway's status: make scale's 20 Gateways took
// 0.1-0.8 s each there, so with 4 workers the last was published 4 s after
// the first.
const gatewayWorkers = 8

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
