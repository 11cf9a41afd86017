package manager

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/metrics"
)

// agentMetrics turns the agent server's protocol events into metrics:
// pushes, their results, the time from a push to its applied answer, and
// refusals.
type agentMetrics struct {
	mu   sync.Mutex
	sent map[pushed]time.Time
	now  func() time.Time
}

// pushed is one version pushed to one pod.
type pushed struct {
	pod     types.NamespacedName
	version string
}

// maxPushesTracked bounds the pushes waiting for an answer: pods that go
// away never answer theirs.
const maxPushesTracked = 10000

func newAgentMetrics() *agentMetrics {
	return &agentMetrics{sent: map[pushed]time.Time{}, now: time.Now}
}

// then returns an observer that records ev, then passes it to next (if set).
func (m *agentMetrics) then(next func(agent.Event)) func(agent.Event) {
	return func(ev agent.Event) {
		m.observe(ev)
		if next != nil {
			next(ev)
		}
	}
}

func (m *agentMetrics) observe(ev agent.Event) {
	gw := metrics.Gateway(ev.Key)
	k := pushed{ev.Pod, ev.Version}
	switch ev.Type {
	case agent.EventPushSent:
		metrics.Pushes.With(gw).Inc()
		m.mu.Lock()
		if len(m.sent) >= maxPushesTracked {
			clear(m.sent)
		}
		if _, ok := m.sent[k]; !ok { // a push sent again keeps its first time
			m.sent[k] = m.now()
		}
		m.mu.Unlock()
	case agent.EventApplyResult:
		m.mu.Lock()
		at, ok := m.sent[k]
		delete(m.sent, k)
		m.mu.Unlock()
		if ev.Message != "OK" {
			metrics.Applies.WithLabelValues(ev.Key.Namespace, ev.Key.Name, metrics.ApplyFailed).Inc()
			return
		}
		metrics.Applies.WithLabelValues(ev.Key.Namespace, ev.Key.Name, metrics.ApplyApplied).Inc()
		if ok {
			metrics.ApplySeconds.With(gw).Observe(m.now().Sub(at).Seconds())
		}
	case agent.EventPushTimedOut:
		metrics.Applies.WithLabelValues(ev.Key.Namespace, ev.Key.Name, metrics.ApplyTimedOut).Inc()
	case agent.EventFilesReported:
		metrics.Resyncs.With(gw).Inc()
	case agent.EventRefused:
		metrics.AgentRefusals.WithLabelValues(string(ev.Reason)).Inc()
	}
}
