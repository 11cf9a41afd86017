package render_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/render"
)

// TestEveryClassOfTheControllerHasAStatus: a GatewayClass of Gatewall's
// controller that no Gateway uses gets its status, as the manager gives it;
// another controller's class gets none.
func TestEveryClassOfTheControllerHasAStatus(t *testing.T) {
	in := graph.NewInput("example.com/gatewall")
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ours"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/gatewall"}})
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/other"}})
	res := render.Render(in, goldenTime)
	if len(res.Statuses) != 1 {
		t.Fatalf("%d statuses, want the one of class ours", len(res.Statuses))
	}
	gc, ok := res.Statuses[0].(*gatewayv1.GatewayClass)
	if !ok || gc.Name != "ours" || !meta.IsStatusConditionTrue(gc.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted)) {
		t.Fatalf("status %+v, want class ours Accepted", res.Statuses[0])
	}
}
