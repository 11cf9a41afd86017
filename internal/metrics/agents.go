package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// agents reports gatewall_agents_connected from the agent server's own
// state at each scrape: no event can be missed, and a Gateway whose agents
// are all gone has no series.
type agents struct {
	desc   *prometheus.Desc
	source atomic.Pointer[func() map[types.NamespacedName]int]
}

var connected = &agents{desc: prometheus.NewDesc("gatewall_agents_connected",
	"nginx-agents of a Gateway's data plane connected to this manager (the leader serves them).", gatewayLabels, nil)}

func init() { ctrlmetrics.Registry.MustRegister(connected) }

// SetAgentsSource sets what gatewall_agents_connected reports: the
// connected agents by Gateway (the agent server's Connected). A manager
// started again in the same process replaces its predecessor's.
func SetAgentsSource(f func() map[types.NamespacedName]int) { connected.source.Store(&f) }

func (a *agents) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

func (a *agents) Collect(ch chan<- prometheus.Metric) {
	f := a.source.Load()
	if f == nil {
		return
	}
	for gw, n := range (*f)() {
		ch <- prometheus.MustNewConstMetric(a.desc, prometheus.GaugeValue, float64(n), gw.Namespace, gw.Name)
	}
}
