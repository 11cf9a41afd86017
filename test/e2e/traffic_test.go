package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestTraffic: a Gateway and a route to an echo backend serve 200 through
// real NGINX configured by the real agent; a changed route serves its new
// behaviour; a deleted route answers 404.
func TestTraffic(t *testing.T) {
	ns := namespace(t, "e2e-traffic")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, echo(ns, "echo-a", 1)...)
	create(t, echo(ns, "echo-b", 1)...)
	route := httpRoute(ns, "app", "gw", "app.example.com", "/", "echo-a")
	create(t, route)
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)

	t.Run("route serves its backend", func(t *testing.T) {
		serves(t, addr, "app.example.com", "/hello", 200, `"pod": "echo-a-`, 60*time.Second)
	})
	t.Run("changed route serves the new behaviour", func(t *testing.T) {
		cur := &gatewayv1.HTTPRoute{}
		if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Rules[0].BackendRefs[0].Name = "echo-b"
		cur.Spec.Rules[0].Matches[0].Path.Value = ptr.To("/v2")
		if err := rt.Client.Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
		serves(t, addr, "app.example.com", "/v2/x", 200, `"pod": "echo-b-`, 60*time.Second)
		serves(t, addr, "app.example.com", "/other", 404, "", 30*time.Second)
	})
	t.Run("deleted route answers 404", func(t *testing.T) {
		if err := rt.Client.Delete(context.Background(), route); err != nil {
			t.Fatal(err)
		}
		serves(t, addr, "app.example.com", "/v2/x", 404, "", 60*time.Second)
	})
}
