package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses;gateways;httproutes;grpcroutes;referencegrants,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses/status;gateways/status;httproutes/status;grpcroutes/status,verbs=get;update;patch
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
}

// Reconcile handles one Gateway.
func (r *GatewayReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	gw := &gatewayv1.Gateway{}
	if err := r.Get(ctx, req.NamespacedName, gw); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.DataPlane.Forget(req.NamespacedName)
		return ctrl.Result{}, r.clearRouteStatuses(ctx, req.NamespacedName, nil)
	}
	in, err := snapshot(ctx, r.Client, r.Config, gw)
	if err != nil {
		return ctrl.Result{}, err
	}
	t := translate.Gateway(in, req.NamespacedName)
	if t == nil {
		// Not (or no longer) a Gatewall Gateway: leave no state behind.
		r.DataPlane.Forget(req.NamespacedName)
		return ctrl.Result{}, r.clearRouteStatuses(ctx, req.NamespacedName, nil)
	}
	g := t.Graph
	addresses := gw.Status.Addresses
	var addressProblem *metav1.Condition
	if r.Provisioning != nil {
		if g.Valid {
			if addresses, addressProblem, err = r.provision(ctx, g); err != nil {
				return ctrl.Result{}, err
			}
		} else if err := r.deprovision(ctx, gw); err != nil {
			return ctrl.Result{}, err
		}
	}
	dp := status.DataPlane{State: status.Pending}
	if t.Files != nil {
		version := r.DataPlane.Publish(req.NamespacedName, t.Files)
		dp = r.DataPlane.State(req.NamespacedName, version)
		logger.V(1).Info("configuration published", "version", version, "routes", len(g.Routes))
	} else {
		r.DataPlane.Forget(req.NamespacedName)
	}
	now := metav1.Now()
	if err := r.writeGatewayStatus(ctx, g, dp, addresses, addressProblem, t.Extra(t.GatewayRef()), now); err != nil {
		return ctrl.Result{}, err
	}
	current := map[types.NamespacedName]bool{}
	for _, route := range g.Routes {
		current[route.Key] = true
		parents := status.RouteParents(route, r.Config.ControllerName, t.Extra(translate.RouteRef(route)), routeParents(route.Source), now)
		if err := r.writeRouteStatus(ctx, route.Source, req.NamespacedName, parents); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.clearRouteStatuses(ctx, req.NamespacedName, current)
}

// clearRouteStatuses removes the Gateway's parent statuses from routes that
// no longer name it (all of them when keep is nil).
func (r *GatewayReconciler) clearRouteStatuses(ctx context.Context, gw types.NamespacedName, keep map[types.NamespacedName]bool) error {
	routes, err := r.routesOf(ctx, client.MatchingFields{indexRouteGateway: nsName(gw.Namespace, gw.Name)})
	if err != nil {
		return err
	}
	for _, route := range routes {
		if keep[client.ObjectKeyFromObject(route)] {
			continue
		}
		if err := r.writeRouteStatus(ctx, route, gw, nil); err != nil {
			return err
		}
	}
	return nil
}

// routesOf lists the HTTPRoutes and GRPCRoutes matching the options.
func (r *GatewayReconciler) routesOf(ctx context.Context, opts ...client.ListOption) ([]client.Object, error) {
	hr, gr := &gatewayv1.HTTPRouteList{}, &gatewayv1.GRPCRouteList{}
	if err := r.List(ctx, hr, opts...); err != nil {
		return nil, fmt.Errorf("listing HTTPRoutes: %w", err)
	}
	if err := r.List(ctx, gr, opts...); err != nil {
		return nil, fmt.Errorf("listing GRPCRoutes: %w", err)
	}
	routes := make([]client.Object, 0, len(hr.Items)+len(gr.Items))
	for i := range hr.Items {
		routes = append(routes, &hr.Items[i])
	}
	for i := range gr.Items {
		routes = append(routes, &gr.Items[i])
	}
	return routes, nil
}

// SetupWithManager registers the reconciler, its indexes and its watches.
func (r *GatewayReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := setupIndexes(context.Background(), mgr, r.Config.ControllerName); err != nil {
		return err
	}
	// Gateways and routes matter when their spec changes; their status is Gatewall's own writing.
	b := ctrl.NewControllerManagedBy(mgr).For(&gatewayv1.Gateway{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.Provisioning != nil {
		// Drift in a data plane's objects, and its Service's address, reconcile the Gateway.
		b = b.Owns(&appsv1.Deployment{}).Owns(&corev1.Service{}).Owns(&corev1.ServiceAccount{}).Owns(&corev1.ConfigMap{})
	}
	return r.watches(b).
		Named("gateway").
		Complete(r)
}
