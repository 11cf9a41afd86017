package manager

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/metrics"
)

// TestAgentMetrics: the agent server's events become the push metrics: a
// push counts when sent; its answer counts as applied (with the time since
// the first send) or failed; a push unanswered in time counts as timed out;
// an agent reporting its files counts as a resync; a refusal counts by its
// reason.
func TestAgentMetrics(t *testing.T) {
	gw := types.NamespacedName{Namespace: "agent-metrics", Name: "gw"}
	pod := types.NamespacedName{Namespace: "agent-metrics", Name: "pod"}
	m := newAgentMetrics()
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	ev := func(typ agent.EventType, version, msg string) {
		m.observe(agent.Event{Type: typ, Key: gw, Pod: pod, Version: version, Message: msg})
	}
	result := func(r string) float64 {
		return testutil.ToFloat64(metrics.Applies.WithLabelValues(gw.Namespace, gw.Name, r))
	}

	ev(agent.EventFilesReported, "", "")
	ev(agent.EventPushSent, "v1", "")
	now = now.Add(2 * time.Second)
	ev(agent.EventPushTimedOut, "v1", "")
	ev(agent.EventPushSent, "v1", "") // sent again: the time counts from the first send
	now = now.Add(time.Second)
	ev(agent.EventApplyResult, "v1", "OK")
	ev(agent.EventPushSent, "v2", "")
	ev(agent.EventApplyResult, "v2", "nginx: [emerg] unknown directive")

	if got := testutil.ToFloat64(metrics.Pushes.WithLabelValues(gw.Namespace, gw.Name)); got != 3 {
		t.Errorf("pushes: %v, want 3", got)
	}
	for r, want := range map[string]float64{metrics.ApplyApplied: 1, metrics.ApplyFailed: 1, metrics.ApplyTimedOut: 1} {
		if got := result(r); got != want {
			t.Errorf("applies{result=%s}: %v, want %v", r, got, want)
		}
	}
	if got := testutil.ToFloat64(metrics.Resyncs.WithLabelValues(gw.Namespace, gw.Name)); got != 1 {
		t.Errorf("resyncs: %v, want 1", got)
	}
	// One applied answer, 3 s after the first send of its version.
	if n := testutil.CollectAndCount(metrics.ApplySeconds, "gatewall_apply_duration_seconds"); n != 1 {
		t.Fatalf("apply duration series: %d, want 1", n)
	}
	h := &dtoHistogram{}
	if err := h.read(metrics.ApplySeconds.WithLabelValues(gw.Namespace, gw.Name)); err != nil {
		t.Fatal(err)
	}
	if h.count != 1 || h.sum != 3 {
		t.Errorf("apply duration: %d observations summing to %v s, want 1 of 3 s", h.count, h.sum)
	}
	if len(m.sent) != 0 {
		t.Errorf("pushes still tracked after their answers: %v", m.sent)
	}

	// Refusals count by reason, with no Gateway: an unauthenticated peer
	// names whatever it likes.
	before := testutil.ToFloat64(metrics.AgentRefusals.WithLabelValues(string(agent.RefusedPod)))
	m.observe(agent.Event{Type: agent.EventRefused, Key: gw, Pod: pod, Reason: agent.RefusedPod, Message: "not sealed"})
	m.observe(agent.Event{Type: agent.EventRefused, Reason: agent.RefusedToken, Message: "garbage"})
	if got := testutil.ToFloat64(metrics.AgentRefusals.WithLabelValues(string(agent.RefusedPod))); got != before+1 {
		t.Errorf("refusals{reason=pod}: %v, want %v", got, before+1)
	}

	metrics.ForgetGateway(gw)
	if got := result(metrics.ApplyApplied); got != 0 {
		t.Errorf("applies after ForgetGateway: %v, want 0 (a new series)", got)
	}
}

// dtoHistogram reads one histogram series' count and sum.
type dtoHistogram struct {
	count uint64
	sum   float64
}

func (h *dtoHistogram) read(o prometheus.Observer) error {
	m := &dto.Metric{}
	if err := o.(prometheus.Metric).Write(m); err != nil {
		return err
	}
	h.count, h.sum = m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	return nil
}
