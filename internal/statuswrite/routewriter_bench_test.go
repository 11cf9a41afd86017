package statuswrite

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/scheme"
)

// BenchmarkRouteStatusPass is one Gateway's pass over the statuses of 5,000
// routes whose statuses did not change, as each change of the Gateway
// makes: handing every route a write that reads it from a cache and finds
// nothing to change, against skipping the writes that would change nothing
// (SetChanged). The cache here is controller-runtime's fake client, which
// copies on read like the informer cache but does more besides, so the
// first figure overstates what the manager spends.
func BenchmarkRouteStatusPass(b *testing.B) {
	const n, ctrl = 5000, "gateway.nginx.org/nginx-gateway-controller"
	gw := types.NamespacedName{Namespace: "ns", Name: "gw"}
	owner := ParentOwner{ControllerName: ctrl, Gateway: gw, Sets: map[types.NamespacedName]bool{}}
	routes := make([]client.Object, n)
	ours := make([][]gatewayv1.RouteParentStatus, n)
	for i := range routes {
		p := gatewayv1.RouteParentStatus{
			ParentRef:      gatewayv1.ParentReference{Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("Gateway")), Name: "gw"},
			ControllerName: ctrl,
		}
		for _, c := range []string{"Accepted", "ResolvedRefs", "PartiallyInvalid"} {
			p.Conditions = append(p.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c, Message: "The route is " + c, ObservedGeneration: 1})
		}
		r := &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("r%d", i)},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("r%d.example.com", i))},
				Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: "echo", Port: ptr.To(gatewayv1.PortNumber(80))}}}}}},
			},
			Status: gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{p}}},
		}
		routes[i], ours[i] = r, []gatewayv1.RouteParentStatus{*p.DeepCopy()}
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(routes...).Build()
	ctx := context.Background()
	b.Run("every-route", func(b *testing.B) {
		w := NewRouteWriter(c, logr.Discard())
		for b.Loop() {
			for i, r := range routes {
				w.Set(r, owner, ours[i])
			}
			for _, r := range routes {
				if err := w.write(ctx, RouteRef(r)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("changed-only", func(b *testing.B) {
		w := NewRouteWriter(c, logr.Discard())
		for b.Loop() {
			for i, r := range routes {
				w.SetChanged(r, owner, ours[i], routekind.Parents(r))
			}
		}
		if len(w.pending) != 0 {
			b.Fatalf("%d routes' statuses that did not change were handed", len(w.pending))
		}
	})
}
