package faults

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/test/testenv"
)

// unreachableFor is how long the control plane stays unreachable.
const unreachableFor = 30 * time.Second

// TestControlPlaneUnreachableAtStart: every packet from the agents to the
// manager is dropped; the Gateway's data plane is scaled from one pod to two
// and a route is added. The new pod's agent cannot reach the control plane
// from its start: the pod stays out of the Service (not Ready: its NGINX runs
// no configuration of the Gateway), the old pod keeps serving every request
// with its last good configuration, and the Gateway is not Programmed. Once
// packets flow again both pods get the configuration: the new pod becomes
// Ready, the new route serves, and the Gateway is Programmed.
func TestControlPlaneUnreachableAtStart(t *testing.T) {
	ctx := context.Background()
	s := setUp(t, "faults-start")
	old := s.nginx.current(t)
	f, _ := onLeader(t)
	f.blackholeAgents(t)
	blocked := time.Now()

	np := &v1alpha2.NginxProxy{}
	if err := rt.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "gw"}, np); err != nil {
		t.Fatal(err)
	}
	np.Spec = nginxProxy(s.ns, "gw", 2).Spec
	if err := rt.Client.Update(ctx, np); err != nil {
		t.Fatal(err)
	}
	rt.Create(t, testenv.HTTPRoute(s.ns, "new", "gw", "new.example.com", "/", "echo"))
	var fresh corev1.Pod
	testenv.Eventually(t, 60*time.Second, func() error {
		pods, err := dataPlanePods(s.ns, "gw")
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.UID != s.pod.UID {
				fresh = p
				return nil
			}
		}
		return errf("waiting for a second data-plane pod")
	})
	freshNGINX := watchNGINX(t, testenv.WaitProcess(t, fresh, "nginx: master"))
	bootstrap := freshNGINX.current(t)

	// While the control plane is unreachable the new pod is never Ready.
	for time.Since(blocked) < unreachableFor {
		p := &corev1.Pod{}
		if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(&fresh), p); err != nil {
			t.Fatal(err)
		}
		if testenv.Ready(*p) {
			t.Fatalf("the new data-plane pod %s is Ready while its agent cannot reach the control plane", p.Name)
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.notProgrammed(t)
	if n := s.nginx.reloadsBefore(time.Now()); n != 0 {
		t.Errorf("the old pod's NGINX reloaded %d times while the control plane was unreachable", n)
	}
	if n := freshNGINX.reloadsBefore(time.Now()); n != 0 {
		t.Errorf("the new pod's NGINX reloaded %d times while the control plane was unreachable", n)
	}
	f.heal(t)
	healed := time.Now()
	testenv.Eventually(t, 120*time.Second, func() error {
		p := &corev1.Pod{}
		if err := rt.Client.Get(ctx, client.ObjectKeyFromObject(&fresh), p); err != nil || !testenv.Ready(*p) {
			return errf("the new data-plane pod %s is not Ready (%v)", fresh.Name, err)
		}
		return nil
	})
	readyAfter := time.Since(healed)
	testenv.Serves(t, s.addr, "new.example.com", "/", 200, `"pod": "echo-`, 120*time.Second)
	servedAfter := time.Since(healed)
	programmed := s.converged(t, healed)
	sent, failed, reloads := s.finish(t, old, 1)
	freshReloads := freshNGINX.check(t, bootstrap, freshNGINX.current(t), 1)
	if freshReloads != 1 {
		t.Errorf("the new pod's NGINX reloaded %d times, want once (its first configuration)", freshReloads)
	}
	t.Logf("control plane unreachable for %s while a second data-plane pod started: %d requests, %d failed; after packets flowed again the new pod was Ready in %s, the new route served in %s, the Gateway was Programmed in %s; NGINX reloads: old pod %d, new pod %d",
		unreachableFor, sent, failed, readyAfter.Round(time.Millisecond), servedAfter.Round(time.Millisecond), programmed.Round(time.Millisecond), reloads, freshReloads)
}
