package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestManagerRestart: while traffic runs, the manager's Deployment is
// scaled to zero and back (its pod stops, a new one starts).
// No request fails (the data plane keeps serving); the reconnecting agent is
// recognized as running the current configuration, so nothing is pushed and
// NGINX is not reloaded; and the new manager serves changes again.
func TestManagerRestart(t *testing.T) {
	ns := namespace(t, "e2e-restart")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, echo(ns, "echo", 2)...)
	create(t, httpRoute(ns, "app", "gw", "app.example.com", "/", "echo"))
	gwKey := types.NamespacedName{Namespace: ns, Name: "gw"}
	addr := programmedAddress(t, gwKey, 90*time.Second)
	serves(t, addr, "app.example.com", "/", 200, `"pod": "echo-`, 60*time.Second)

	load := testenv.StartLoad(t, addr, "app.example.com", "/")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var flapped atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			gw := &gatewayv1.Gateway{}
			if err := rt.Client.Get(context.Background(), gwKey, gw); err == nil {
				if c := meta.FindStatusCondition(gw.Status.Conditions, "Programmed"); c == nil || c.Status != metav1.ConditionTrue {
					flapped.Store(fmt.Sprintf("%+v", c))
				}
			}
		}
	}()

	if err := rt.ScaleManager(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the data plane runs without its control plane
	restarted := time.Now()
	if err := rt.ScaleManager(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	rec := watchEvents(t, restarted)
	// The agent reconnects; the current configuration is confirmed, either
	// from the files it reports or by a push it answers without fetching.
	resync := rec.WaitConfirmed(t, gwKey, restarted, 60*time.Second, "waiting for the data-plane pod's agent to reconnect and confirm")
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	sent, failed := load.Stop()
	if failed != 0 {
		t.Errorf("%d of %d requests failed across the manager restart", failed, sent)
	}
	if c := flapped.Load(); c != nil {
		t.Errorf("the Gateway's Programmed condition flapped during the restart: %v", c)
	}
	if n := len(rec.Of(agent.EventFileServed, gwKey)); n != 0 {
		t.Errorf("%d files were transferred after the restart; the agent already had them all", n)
	}
	t.Logf("manager restart: %d requests, %d failed; the agent resynced %s after the restart, with no file transferred", sent, failed, resync.Round(time.Millisecond))

	create(t, httpRoute(ns, "new", "gw", "new.example.com", "/", "echo"))
	serves(t, addr, "new.example.com", "/", 200, `"pod": "echo-`, 30*time.Second)
}
