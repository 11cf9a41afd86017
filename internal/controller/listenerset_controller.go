package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/snapshot"
	"github.com/gatewall/gatewall/internal/statuswrite"
)

// ListenerSetReconciler cleans up after ListenerSets that no Gateway of
// Gatewall's has any more (deleted, or moved to a Gateway Gatewall does not
// serve, or whose Gateway is gone): it removes the route parent statuses
// Gatewall wrote for them, through the route status writer the Gateway
// reconciler writes with. While a Gatewall Gateway has a ListenerSet, the
// Gateway reconciler owns the set's status and its routes' statuses.
type ListenerSetReconciler struct {
	client.Client
	Config Config
	// RouteStatuses is the writer of route parent statuses the Gateway
	// reconciler writes with.
	RouteStatuses *statuswrite.RouteWriter
}

// Reconcile handles one ListenerSet.
func (r *ListenerSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ls := &gatewayv1.ListenerSet{}
	if err := r.Get(ctx, req.NamespacedName, ls); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	} else {
		ours, err := gatewayIsOurs(ctx, r.Client, r.Config.ControllerName, graph.ListenerSetParent(ls))
		if err != nil || ours {
			return ctrl.Result{}, err
		}
	}
	owner := statuswrite.ParentOwner{ControllerName: r.Config.ControllerName, Sets: map[types.NamespacedName]bool{req.NamespacedName: true}}
	return ctrl.Result{}, eachRouteBut(ctx, r.Client, r.Config.routeKinds(), nil, []client.MatchingFields{{snapshot.IndexRouteListenerSet: req.String()}},
		func(route client.Object) error {
			r.RouteStatuses.Set(route, owner, nil)
			return nil
		})
}

// SetupWithManager registers the reconciler: ListenerSets, and the
// ListenerSets of Gateways that change class or go.
func (r *ListenerSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&gatewayv1.ListenerSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&gatewayv1.Gateway{}, handler.EnqueueRequestsFromMapFunc(r.setsOfGateway), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("listenerset").
		Complete(r)
}

func (r *ListenerSetReconciler) setsOfGateway(ctx context.Context, o client.Object) []reconcile.Request {
	list := &gatewayv1.ListenerSetList{}
	if err := r.List(ctx, list, client.MatchingFields{snapshot.IndexListenerSetGateway: snapshot.NsName(o.GetNamespace(), o.GetName())}); err != nil {
		log.FromContext(ctx).Error(fmt.Errorf("listing ListenerSets: %w", err), "mapping a Gateway to its ListenerSets")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}
