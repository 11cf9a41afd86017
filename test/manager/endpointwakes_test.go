package manager_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// TestRoutesAndEndpointsChangeTogether changes a route's backend and the
// backends' endpoints at once, as a rollout does while routes are edited:
// a Gateway queued by EndpointSlices alone reads only their Services'
// slices, and that must never leave a route change unread when both
// queued it. Each round starts a full reconcile (another route's edit;
// 150 routes make it last), then moves route r0 between Services a and c
// while c's endpoints change, and waits for the Gateway to show both.
func TestRoutesAndEndpointsChangeTogether(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"a", "b", "c"} {
		create(t, service(ns, svc), endpointSlice(ns, svc, "10.9.0.1"))
	}
	const routes = 150
	create(t, gateway(ns, "gw"), httpRoute(ns, "r0", "gw", "c"))
	for i := 1; i < routes; i++ {
		create(t, httpRoute(ns, fmt.Sprintf("r%d", i), "gw", "b"))
	}
	gw := types.NamespacedName{Namespace: ns, Name: "gw"}
	upstream := func(svc string) string { return config.UpstreamID(types.NamespacedName{Namespace: ns, Name: svc}, 80) }
	edit := func(route string, change func(*gatewayv1.HTTPRoute)) {
		r := &gatewayv1.HTTPRoute{}
		r.Namespace, r.Name = ns, route
		update(t, r, func(o client.Object) { change(o.(*gatewayv1.HTTPRoute)) })
	}
	for round := range 16 {
		svc := []string{"a", "c"}[round%2]
		ips := []string{fmt.Sprintf("10.9.%d.1", round+1), fmt.Sprintf("10.9.%d.2", round+1)}
		edit(fmt.Sprintf("r%d", 1+round), func(r *gatewayv1.HTTPRoute) {
			r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(fmt.Sprintf("round%d.example.com", round)))
		})
		var wg sync.WaitGroup
		wg.Go(func() { setSliceEndpoints(t, ns, "c-slice", ips...) })
		wg.Go(func() {
			edit("r0", func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs[0].Name = gatewayv1.ObjectName(svc) })
		})
		wg.Wait()
		eventually(t, 15*time.Second, func() error {
			set := held.Endpoints(gw)
			_, onA := set[upstream("a")]
			c, onC := set[upstream("c")]
			switch {
			case svc == "a" && (!onA || onC):
				return fmt.Errorf("round %d: r0 moved to a, the upstreams held are a %t, c %t", round, onA, onC)
			case svc == "c" && (onA || !slices.Equal(c.Endpoints, endpointsOf(ips))):
				return fmt.Errorf("round %d: r0 moved to c, a is held %t, c's endpoints are %v, want %v", round, onA, c.Endpoints, endpointsOf(ips))
			}
			return nil
		})
	}
}

// endpointsOf are addresses with the slices' port, as held.
func endpointsOf(ips []string) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip+":8080")
	}
	return out
}
