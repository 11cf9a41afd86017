package controller

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// SetRouteParents hands the writer a route's parent statuses for Gateway gw
// of controller, for the external tests.
func (w *RouteStatusWriter) SetRouteParents(route client.Object, controller string, gw types.NamespacedName, ours []gatewayv1.RouteParentStatus) {
	w.set(route, parentOwner{controllerName: controller, gateway: gw, sets: map[types.NamespacedName]bool{}}, ours)
}
