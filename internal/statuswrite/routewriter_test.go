package statuswrite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/test/testenv"
)

const (
	ours   = "gateway.nginx.org/nginx-gateway-controller"
	theirs = "example.com/other-controller"
)

// owner is Gatewall's owner of Gateway gw's parent statuses.
func owner(gw types.NamespacedName) statuswrite.ParentOwner {
	return statuswrite.ParentOwner{ControllerName: ours, Gateway: gw, Sets: map[types.NamespacedName]bool{}}
}

// parent is a parent status of Gateway name by controller ctrl; an empty
// reason makes it one the API server refuses.
func parent(ctrl, name, reason string) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{
		ParentRef: gatewayv1.ParentReference{ // as the API server defaults it
			Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("Gateway")), Name: gatewayv1.ObjectName(name),
		},
		ControllerName: gatewayv1.GatewayController(ctrl),
		Conditions: []metav1.Condition{{
			Type: "Accepted", Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: 1,
			LastTransitionTime: metav1.NewTime(time.Unix(1_700_000_000, 0)),
		}},
	}
}

// startAPIServer starts a real API server for the test, with namespace ns;
// the context ends with the test.
func startAPIServer(t *testing.T, ns string) (context.Context, *testenv.Env) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return ctx, env
}

// TestRouteStatusWriter, against a real API server: writes for one route
// and Gateway made before the writer gets to them become one status update
// with the newest; a write the API server refuses is retried until a newer
// one replaces it; clearing removes Gatewall's entry and keeps another
// controller's.
func TestRouteStatusWriter(t *testing.T) {
	ctx, env := startAPIServer(t, "writer")
	c := env.Client
	route := testenv.HTTPRoute("writer", "r", "gw", "r.example.com", "/", "svc")
	route.Spec.ParentRefs = append(route.Spec.ParentRefs, gatewayv1.ParentReference{Name: "other"})
	if err := c.Create(ctx, route); err != nil {
		t.Fatal(err)
	}
	other := parent(theirs, "other", "Accepted")
	route.Status.Parents = []gatewayv1.RouteParentStatus{other}
	if err := c.Status().Update(ctx, route); err != nil {
		t.Fatal(err)
	}
	gw := types.NamespacedName{Namespace: "writer", Name: "gw"}
	w := statuswrite.NewRouteWriter(c, logr.Discard())

	// Three writes before the writer runs: one update, the newest.
	for _, reason := range []string{"First", "Second", "Newest"} {
		w.Set(route, owner(gw), []gatewayv1.RouteParentStatus{parent(ours, "gw", reason)})
	}
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	rw, err := wc.Watch(ctx, &gatewayv1.HTTPRouteList{}, client.InNamespace("writer"))
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Stop()
	go func() { _ = w.Start(ctx) }()
	want := []gatewayv1.RouteParentStatus{other, parent(ours, "gw", "Newest")}
	waitParents(t, c, route, want)
	if n := updates(rw, 2*time.Second); n != 1 {
		t.Errorf("the route's status was updated %d times for three writes made before the writer ran, want once", n)
	}

	// A write the API server refuses (a condition without a reason) is
	// retried, and a newer one replaces it.
	w.Set(route, owner(gw), []gatewayv1.RouteParentStatus{parent(ours, "gw", "")})
	time.Sleep(time.Second)
	waitParents(t, c, route, want)
	want = []gatewayv1.RouteParentStatus{other, parent(ours, "gw", "Fixed")}
	w.Set(route, owner(gw), want[1:])
	waitParents(t, c, route, want)

	// Clearing removes Gatewall's entry only.
	w.Set(route, owner(gw), nil)
	waitParents(t, c, route, []gatewayv1.RouteParentStatus{other})

	// Writes for two Gateways of one route, made before a writer runs,
	// are one update with both: a route with many parents is not updated
	// once per Gateway.
	second := types.NamespacedName{Namespace: "writer", Name: "other"}
	w2 := statuswrite.NewRouteWriter(c, logr.Discard())
	w2.Set(route, owner(gw), []gatewayv1.RouteParentStatus{parent(ours, "gw", "Both")})
	w2.Set(route, owner(second), []gatewayv1.RouteParentStatus{parent(ours, "other", "Both")})
	rw2, err := wc.Watch(ctx, &gatewayv1.HTTPRouteList{}, client.InNamespace("writer"))
	if err != nil {
		t.Fatal(err)
	}
	defer rw2.Stop()
	go func() { _ = w2.Start(ctx) }()
	waitParents(t, c, route, []gatewayv1.RouteParentStatus{other, parent(ours, "gw", "Both"), parent(ours, "other", "Both")})
	if n := updates(rw2, 2*time.Second); n != 1 {
		t.Errorf("the route's status was updated %d times for two Gateways' writes made before the writer ran, want once", n)
	}

	// Clears of two ListenerSets' entries (sets no Gateway of Gatewall's
	// has any more), made before a writer runs, are both made: each
	// owner of sets alone has its own pending write, as each Gateway has.
	setParent := func(name string) gatewayv1.RouteParentStatus {
		p := parent(ours, name, "Set")
		p.ParentRef.Kind = ptr.To(gatewayv1.Kind("ListenerSet"))
		return p
	}
	fresh := &gatewayv1.HTTPRoute{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(route), fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Status.Parents = []gatewayv1.RouteParentStatus{other, setParent("a"), setParent("b")}
	if err := c.Status().Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	setOwner := func(name string) statuswrite.ParentOwner {
		return statuswrite.ParentOwner{ControllerName: ours, Sets: map[types.NamespacedName]bool{{Namespace: "writer", Name: name}: true}}
	}
	w3 := statuswrite.NewRouteWriter(c, logr.Discard())
	w3.Set(route, setOwner("a"), nil)
	w3.Set(route, setOwner("b"), nil)
	go func() { _ = w3.Start(ctx) }()
	waitParents(t, c, route, []gatewayv1.RouteParentStatus{other})
}

// waitParents waits until the route's parent statuses are want.
func waitParents(t *testing.T, c client.Client, route *gatewayv1.HTTPRoute, want []gatewayv1.RouteParentStatus) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		got := &gatewayv1.HTTPRoute{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(route), got); err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(got.Status.Parents, want) {
			return fmt.Errorf("parents %+v, want %+v", got.Status.Parents, want)
		}
		return nil
	})
}

// updates counts the modifications a watch sees within d.
func updates(w watch.Interface, d time.Duration) int {
	n := 0
	deadline := time.After(d)
	for {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Modified {
				n++
			}
		case <-deadline:
			return n
		}
	}
}
