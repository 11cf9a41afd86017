package faults

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestManagerRestartsMidPush: the manager's link to the agent is slowed to
// 1 Mbit/s, a configuration of some 1.3 MB is pushed, and while the agent
// downloads it the manager pod is killed (no grace period); its Deployment
// starts a new one. NGINX keeps its configuration meanwhile (no partial
// file, no reload), the unchanged route serves every request, and the new
// manager pushes the configuration again: the new routes serve and the
// Gateway is Programmed.
func TestManagerRestartsMidPush(t *testing.T) {
	ctx := context.Background()
	s := setUp(t, "faults-restart")
	d := s.startDownload(t)
	old, start, rec, leader, served := d.old, d.start, d.rec, d.leader, d.served
	killed := time.Now()
	if err := rt.Client.Delete(ctx, &leader, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	var next string
	testenv.Eventually(t, 120*time.Second, func() error {
		if next = rt.LeaderName(ctx); next == "" || next == leader.Name {
			return errf("leader still %q", next)
		}
		p := &corev1.Pod{}
		if err := rt.Client.Get(ctx, client.ObjectKey{Namespace: localrun.ManagerNamespace, Name: next}, p); err != nil || !testenv.Ready(*p) {
			return errf("new leader %s not ready (%v)", next, err)
		}
		return nil
	})
	led := time.Since(killed)
	if len(rec.Of(agent.EventApplyResult, s.gw)) != 0 {
		t.Errorf("the killed manager had an answer to its push: the download was not cut")
	}
	rec2 := rt.WatchEvents(t, killed)
	s.servesBig(t, 180*time.Second)
	servedAfter := time.Since(killed)
	programmed := s.converged(t, killed)
	// The new manager served servers.conf again: the agent did not have it
	// from the cut download (and NGINX reloaded once, with all of it: check).
	if _, ok := servedServers(rec2, s); !ok {
		t.Errorf("the new manager did not serve servers.conf: the agent had it already, from the cut download")
	}
	sent, failed, reloads := s.finish(t, old, 1)
	t.Logf("manager %s killed %s into the download (servers.conf served at %s): %d requests, %d failed; NGINX reloaded %d time(s), with the whole new configuration; %s led after %s; the new routes served %s and the Gateway was Programmed %s after the kill; new manager's agent answers: %s",
		leader.Name, killed.Sub(served).Round(time.Millisecond), served.Sub(start).Round(time.Millisecond), sent, failed, reloads,
		next, led.Round(time.Millisecond), servedAfter.Round(time.Millisecond), programmed.Round(time.Millisecond),
		answers(rec2.Of(agent.EventApplyResult, s.gw)))
}
