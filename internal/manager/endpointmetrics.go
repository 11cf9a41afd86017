package manager

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/metrics"
)

// observeEndpointAck records a pod's acknowledgement of endpoints.
func observeEndpointAck(a endpointfeed.Ack) {
	gw := metrics.Gateway(a.Gateway)
	if a.Error != "" {
		metrics.EndpointUpdates.WithLabelValues(a.Gateway.Namespace, a.Gateway.Name, metrics.EndpointsRefused).Inc()
		return
	}
	result := metrics.EndpointsApplied
	if a.Refused > 0 {
		result = metrics.EndpointsPartial
	}
	metrics.EndpointUpdates.WithLabelValues(a.Gateway.Namespace, a.Gateway.Name, result).Inc()
	if a.Latency > 0 {
		metrics.EndpointPropagationSeconds.With(gw).Observe(a.Latency.Seconds())
	}
}

// endpointVersions are the feed's statuses as the version metrics report them.
func endpointVersions(st map[types.NamespacedName]endpointfeed.Status) map[types.NamespacedName]metrics.EndpointVersions {
	out := make(map[types.NamespacedName]metrics.EndpointVersions, len(st))
	for gw, s := range st {
		v := metrics.EndpointVersions{Desired: s.Version, Pods: map[string]uint64{}}
		for _, p := range s.Pods {
			v.Pods[p.Pod.Name] = p.Version
		}
		out[gw] = v
	}
	return out
}
