package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
)

// writeGatewayStatus writes the Gateway's status when it changed.
func (r *GatewayReconciler) writeGatewayStatus(ctx context.Context, g *graph.Gateway, dp status.DataPlane, addresses []gatewayv1.GatewayStatusAddress, problem *metav1.Condition, extra []metav1.Condition, now metav1.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw := &gatewayv1.Gateway{}
		if err := r.Get(ctx, g.Key, gw); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := status.Gateway(g, dp, addresses, problem, extra, gw.Status, now)
		if equality.Semantic.DeepEqual(gw.Status, want) {
			return nil
		}
		gw.Status = want
		if err := statuswrite.Update(ctx, r, gw); err != nil {
			return fmt.Errorf("updating status of Gateway %s: %w", g.Key, err)
		}
		return nil
	})
}

// writeListenerSetStatus writes a ListenerSet's status when it changed.
func (r *GatewayReconciler) writeListenerSetStatus(ctx context.Context, s *graph.ListenerSet, dp status.DataPlane, now metav1.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ls := &gatewayv1.ListenerSet{}
		if err := r.Get(ctx, s.Key, ls); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := status.ListenerSet(s, dp, ls.Status, now)
		if equality.Semantic.DeepEqual(ls.Status, want) {
			return nil
		}
		ls.Status = want
		if err := statuswrite.Update(ctx, r, ls); err != nil {
			return fmt.Errorf("updating status of ListenerSet %s: %w", s.Key, err)
		}
		return nil
	})
}
