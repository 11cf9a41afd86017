package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestNotifierWakesOnlyTheNotifiedGateways: a data plane's report wakes
// its own Gateway, not every Gateway; Notify (fetched bundles) wakes all;
// subscribers that map every wake-up alike get theirs.
func TestNotifierWakesOnlyTheNotifiedGateways(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := &Notifier{}
	everything := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "every"}}}
	all := func(context.Context, client.Object) []reconcile.Request { return everything }
	start := func(ofGateway func(context.Context, types.NamespacedName) []reconcile.Request) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		t.Cleanup(q.ShutDown)
		if err := n.GatewaySource(all, ofGateway).Start(ctx, q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	gateways := start((&GatewayReconciler{}).dataPlaneReported)
	policies := start(nil)
	drain := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], want int) []string {
		t.Helper()
		var got []string
		for deadline := time.Now().Add(5 * time.Second); len(got) < want; {
			if time.Now().After(deadline) {
				t.Fatalf("got %v, want %d requests", got, want)
			}
			if q.Len() == 0 {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			r, _ := q.Get()
			q.Done(r)
			q.Forget(r)
			got = append(got, r.String())
		}
		time.Sleep(50 * time.Millisecond)
		if q.Len() != 0 {
			t.Fatalf("more requests than %v", got)
		}
		slices.Sort(got)
		return got
	}

	n.NotifyGateway(types.NamespacedName{Namespace: "ns", Name: "a"})
	n.NotifyGateway(types.NamespacedName{Namespace: "ns", Name: "b"})
	if got := drain(gateways, 2); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
		t.Errorf("a data plane report woke %v, want ns/a and ns/b only", got)
	}
	if got := drain(policies, 1); !slices.Equal(got, []string{"ns/every"}) {
		t.Errorf("a subscriber without a Gateway mapping got %v", got)
	}
	n.Notify()
	if got := drain(gateways, 1); !slices.Equal(got, []string{"ns/every"}) {
		t.Errorf("Notify woke %v, want every Gateway", got)
	}
	drain(policies, 1)
}
