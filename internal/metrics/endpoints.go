package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of an endpoint update (gatewall_endpoint_updates_total).
const (
	EndpointsApplied = "applied"
	EndpointsRefused = "refused"
	// EndpointsPartial: applied but for some upstreams, which keep the
	// endpoints they had.
	EndpointsPartial = "partial"
)

var (
	// EndpointUpdates counts the pods' answers to endpoint updates.
	EndpointUpdates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_endpoint_updates_total",
		Help: "Endpoint updates a Gateway's data-plane pods acknowledged, by result: applied (no reload), refused (the pod keeps the endpoints it had), partial (applied but for some upstreams, which keep the endpoints they had).",
	}, append(gatewayLabels, LabelResult))
	// EndpointPropagationSeconds is the time from a change of a Gateway's
	// endpoints to each pod's acknowledgement that NGINX uses them.
	EndpointPropagationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gatewall_endpoint_propagation_seconds", Buckets: latencyBuckets,
		Help: "Time from Gatewall taking a change of a Gateway's endpoints to a data-plane pod's acknowledgement that NGINX uses them (one observation per pod).",
	}, gatewayLabels)
)

// EndpointVersions are the versions of a Gateway's endpoints: the newest,
// and the one each pod with a stream open acknowledged, by pod name.
type EndpointVersions struct {
	Desired uint64
	Pods    map[string]uint64
}

// endpointVersions reports gatewall_endpoints_version and
// gatewall_endpoints_pod_version from the feed's own state at each scrape.
type endpointVersions struct {
	desired, pod *prometheus.Desc
	source       atomic.Pointer[func() map[types.NamespacedName]EndpointVersions]
}

var versions = &endpointVersions{
	desired: prometheus.NewDesc("gatewall_endpoints_version",
		"The newest version of a Gateway's endpoints (it counts changes since the leader started).", gatewayLabels, nil),
	pod: prometheus.NewDesc("gatewall_endpoints_pod_version",
		"The version of a Gateway's endpoints a data-plane pod acknowledged, for each pod whose endpoints client is connected.", append(gatewayLabels, "pod"), nil),
}

func init() {
	ctrlmetrics.Registry.MustRegister(EndpointUpdates, EndpointPropagationSeconds, versions)
}

// SetEndpointsSource sets what the endpoint version metrics report (the
// endpoint feed's state by Gateway).
func SetEndpointsSource(f func() map[types.NamespacedName]EndpointVersions) {
	versions.source.Store(&f)
}

func (v *endpointVersions) Describe(ch chan<- *prometheus.Desc) {
	ch <- v.desired
	ch <- v.pod
}

func (v *endpointVersions) Collect(ch chan<- prometheus.Metric) {
	f := v.source.Load()
	if f == nil {
		return
	}
	for gw, ev := range (*f)() {
		ch <- prometheus.MustNewConstMetric(v.desired, prometheus.GaugeValue, float64(ev.Desired), gw.Namespace, gw.Name)
		for pod, n := range ev.Pods {
			ch <- prometheus.MustNewConstMetric(v.pod, prometheus.GaugeValue, float64(n), gw.Namespace, gw.Name, pod)
		}
	}
}
