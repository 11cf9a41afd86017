package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
)

// writeGatewayStatus writes the Gateway's status when it changed.
func (r *GatewayReconciler) writeGatewayStatus(ctx context.Context, g *graph.Gateway, dp status.DataPlane, addresses []gatewayv1.GatewayStatusAddress, problem *metav1.Condition, extra []metav1.Condition, now metav1.Time) error {
	return statuswrite.WriteStatus(ctx, r.Client, g.Key, func() client.Object { return &gatewayv1.Gateway{} }, func(o client.Object) bool {
		gw := o.(*gatewayv1.Gateway)
		want := status.Gateway(g, dp, addresses, problem, extra, gw.Status, now)
		if equality.Semantic.DeepEqual(gw.Status, want) {
			return false
		}
		gw.Status = want
		return true
	})
}

// writeListenerSetStatus writes a ListenerSet's status when it changed.
func (r *GatewayReconciler) writeListenerSetStatus(ctx context.Context, s *graph.ListenerSet, dp status.DataPlane, now metav1.Time) error {
	return statuswrite.WriteStatus(ctx, r.Client, s.Key, func() client.Object { return &gatewayv1.ListenerSet{} }, func(o client.Object) bool {
		ls := o.(*gatewayv1.ListenerSet)
		want := status.ListenerSet(s, dp, ls.Status, now)
		if equality.Semantic.DeepEqual(ls.Status, want) {
			return false
		}
		ls.Status = want
		return true
	})
}
