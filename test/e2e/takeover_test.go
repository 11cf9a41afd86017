package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/test/testenv"
)

// agentEndpoints are the ready pod names behind the agent Service.
func agentEndpoints(ctx context.Context) ([]string, error) {
	slices := &discoveryv1.EndpointSliceList{}
	if err := rt.Client.List(ctx, slices, client.InNamespace(localrun.ManagerNamespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: "gatewall-agent"}); err != nil {
		return nil, err
	}
	var pods []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready && e.TargetRef != nil {
				pods = append(pods, e.TargetRef.Name)
			}
		}
	}
	return pods, nil
}

// TestLeaderTakeover: with two manager replicas only the leader serves the
// agents, and the agent Service sends them nowhere else. The leader is
// killed under load (no graceful release of its Lease): the other replica
// takes over, the data plane's agent reconnects to it, statuses and
// configuration keep following changes, and no request to an unchanged
// route fails.
func TestLeaderTakeover(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-takeover")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, echo(ns, "echo", 2)...)
	create(t, httpRoute(ns, "app", "gw", "app.example.com", "/", "echo"))
	gwKey := types.NamespacedName{Namespace: ns, Name: "gw"}
	addr := programmedAddress(t, gwKey, 90*time.Second)
	serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)

	if err := rt.ScaleManager(ctx, 2); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.ScaleManager(context.Background(), 1); err != nil {
			t.Error(err)
		}
	})
	old := rt.LeaderName(ctx)
	eventually(t, 30*time.Second, func() error {
		if pods, err := agentEndpoints(ctx); err != nil || len(pods) != 1 || pods[0] != old {
			return fmt.Errorf("agent Service endpoints %v (%v), want only the leader %s", pods, err, old)
		}
		return nil
	})

	load := testenv.StartLoad(t, addr, "app.example.com", "/")

	killed := time.Now()
	next := killLeader(t, old)
	tookOver := time.Since(killed)
	eventually(t, 30*time.Second, func() error {
		if pods, err := agentEndpoints(ctx); err != nil || len(pods) != 1 || pods[0] != next {
			return fmt.Errorf("agent Service endpoints %v (%v), want only the new leader %s", pods, err, next)
		}
		return nil
	})
	endpoints := time.Since(killed)
	rec := watchEvents(t, killed)
	reconnected := rec.WaitConfirmed(t, gwKey, killed, 60*time.Second, "waiting for the data plane's agent to reconnect to the new leader")

	create(t, httpRoute(ns, "new", "gw", "new.example.com", "/", "echo"))
	serves(t, addr, "new.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)
	eventually(t, 30*time.Second, func() error {
		r := &gatewayv1.HTTPRoute{}
		if err := rt.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "new"}, r); err != nil {
			return err
		}
		if len(r.Status.Parents) == 0 || !meta.IsStatusConditionTrue(r.Status.Parents[0].Conditions, "Accepted") {
			return errf("new route status %+v", r.Status.Parents)
		}
		return nil
	})
	served := time.Since(killed)
	time.Sleep(time.Second)
	sent, failed := load.Stop()
	if failed != 0 {
		t.Errorf("%d of %d requests to an unchanged route failed across the takeover", failed, sent)
	}
	t.Logf("leader %s killed: %s took over after %s, was the agent Service's endpoint after %s; the agent reconnected after %s; a new route served and Accepted after %s; %d requests, %d failed",
		old, next, tookOver.Round(time.Millisecond), endpoints.Round(time.Millisecond), reconnected.Round(time.Millisecond), served.Round(time.Millisecond), sent, failed)
}

// killLeader kills the leader's pod (no graceful release of its Lease) and
// waits for another replica to lead; it returns the new leader.
func killLeader(t *testing.T, leader string) string {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = localrun.ManagerNamespace, leader
	if err := rt.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	var next string
	eventually(t, 60*time.Second, func() error {
		if next = rt.LeaderName(ctx); next == "" || next == leader {
			return fmt.Errorf("leader still %q", next)
		}
		return nil
	})
	return next
}
