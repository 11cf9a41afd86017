package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
)

// writeGatewayStatus writes the Gateway's status when it changed.
func (r *GatewayReconciler) writeGatewayStatus(ctx context.Context, g *graph.Gateway, dp status.DataPlane, addresses []gatewayv1.GatewayStatusAddress, address *metav1.Condition, extra []metav1.Condition, now metav1.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw := &gatewayv1.Gateway{}
		if err := r.Get(ctx, g.Key, gw); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := status.Gateway(g, dp, addresses, address, extra, gw.Status, now)
		if equality.Semantic.DeepEqual(gw.Status, want) {
			return nil
		}
		gw.Status = want
		if err := r.Status().Update(ctx, gw); err != nil {
			return fmt.Errorf("updating status of Gateway %s: %w", g.Key, err)
		}
		return nil
	})
}

// routeParents returns a route's current parent statuses.
func routeParents(obj client.Object) []gatewayv1.RouteParentStatus {
	switch o := obj.(type) {
	case *gatewayv1.HTTPRoute:
		return o.Status.Parents
	case *gatewayv1.GRPCRoute:
		return o.Status.Parents
	}
	return nil
}

func setRouteParents(obj client.Object, parents []gatewayv1.RouteParentStatus) {
	switch o := obj.(type) {
	case *gatewayv1.HTTPRoute:
		o.Status.Parents = parents
	case *gatewayv1.GRPCRoute:
		o.Status.Parents = parents
	}
}

// writeRouteStatus replaces, in a route's status, the parent statuses
// Gatewall wrote for one Gateway with ours; other Gateways' and other
// controllers' entries are kept as they are.
func (r *GatewayReconciler) writeRouteStatus(ctx context.Context, route client.Object, gw types.NamespacedName, ours []gatewayv1.RouteParentStatus) error {
	key := client.ObjectKeyFromObject(route)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		fresh := route.DeepCopyObject().(client.Object)
		if err := r.Get(ctx, key, fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		old := routeParents(fresh)
		var want []gatewayv1.RouteParentStatus
		for _, p := range old {
			if string(p.ControllerName) == r.Config.ControllerName && refersTo(p.ParentRef, key.Namespace, gw) {
				continue
			}
			want = append(want, p)
		}
		want = append(want, ours...)
		if equality.Semantic.DeepEqual(old, want) || len(old) == 0 && len(want) == 0 {
			return nil
		}
		if want == nil {
			want = []gatewayv1.RouteParentStatus{}
		}
		setRouteParents(fresh, want)
		if err := r.Status().Update(ctx, fresh); err != nil {
			return fmt.Errorf("updating status of %T %s: %w", route, key, err)
		}
		return nil
	})
}

// refersTo says whether a parentRef of a route in namespace ns names the Gateway gw.
func refersTo(ref gatewayv1.ParentReference, ns string, gw types.NamespacedName) bool {
	if ref.Group != nil && string(*ref.Group) != gatewayv1.GroupName || ref.Kind != nil && *ref.Kind != "Gateway" {
		return false
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return ns == gw.Namespace && string(ref.Name) == gw.Name
}
