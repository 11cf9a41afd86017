// Package metrics holds Gatewall's own Prometheus metrics (prefix
// gatewall_), registered with controller-runtime's registry, so that the
// manager's metrics endpoint serves them beside controller-runtime's, with
// the same authentication and authorization. docs/metrics.md lists them.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Labels of the per-Gateway metrics.
const (
	LabelNamespace = "namespace"
	LabelGateway   = "gateway"
	LabelResult    = "result"
	LabelKind      = "kind"
	LabelReason    = "reason"
)

// Results of an apply (gatewall_applies_total).
const (
	ApplyApplied  = "applied"
	ApplyFailed   = "failed"
	ApplyTimedOut = "timed_out"
)

// Results of a bundle fetch (gatewall_bundle_fetches_total).
const (
	FetchFetched        = "fetched"
	FetchError          = "fetch_error"
	FetchIntegrityError = "integrity_error"
)

// Results of a status write (gatewall_status_writes_total).
const (
	WriteWritten  = "written"
	WriteConflict = "conflict"
	WriteFailed   = "failed"
)

var gatewayLabels = []string{LabelNamespace, LabelGateway}

// latencyBuckets cover a translation or an apply: 1 ms to about 33 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2, 16)

var (
	// TranslationSeconds is how long translating a Gateway's objects into
	// NGINX configuration took (the graph, policies and files; not the
	// reading of objects from the cache).
	TranslationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gatewall_translation_duration_seconds", Buckets: latencyBuckets,
		Help: "Time to translate a Gateway's objects into its NGINX configuration.",
	}, gatewayLabels)
	// EndpointRefreshes counts the changes of a Gateway's input that moved
	// endpoints only and were not translated: its last translation was
	// kept with the new endpoints (translate.RefreshEndpoints).
	EndpointRefreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_endpoint_refreshes_total",
		Help: "Changes of a Gateway's endpoints that reached its data plane without a translation.",
	}, gatewayLabels)
	// EndpointWakes counts the endpoint refreshes made without reading a
	// snapshot: the Gateway was queued by EndpointSlice changes alone.
	EndpointWakes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_endpoint_wakes_total",
		Help: "Endpoint refreshes of a Gateway woken by EndpointSlice changes alone, made without reading its other objects.",
	}, gatewayLabels)
	// ConfigurationBytes and ConfigurationFiles are the size of a Gateway's
	// current configuration.
	ConfigurationBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gatewall_configuration_bytes",
		Help: "Bytes of the files of a Gateway's current NGINX configuration.",
	}, gatewayLabels)
	ConfigurationFiles = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gatewall_configuration_files",
		Help: "Files of a Gateway's current NGINX configuration.",
	}, gatewayLabels)
	// Pushes counts configurations sent to the data plane's agents.
	Pushes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_pushes_total",
		Help: "Configurations sent to a Gateway's nginx-agents (one per pod and version).",
	}, gatewayLabels)
	// Applies counts the agents' final answers to pushes, and the pushes
	// that got none in time.
	Applies = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_applies_total",
		Help: "Results of pushes: applied; failed (NGINX refused the configuration and keeps its last good one); timed_out (no answer in time: the push is sent again).",
	}, append(gatewayLabels, LabelResult))
	// ApplySeconds is the time from sending a push to the agent's answer
	// that NGINX runs it.
	ApplySeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gatewall_apply_duration_seconds", Buckets: latencyBuckets,
		Help: "Time from sending a configuration to a Gateway's nginx-agent to its answer that NGINX applied it.",
	}, gatewayLabels)
	// Resyncs counts agents that reported their files after connecting.
	Resyncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_agent_resyncs_total",
		Help: "nginx-agents of a Gateway that connected and reported their files (after a start, a restart or a lost connection).",
	}, gatewayLabels)
	// AgentRefusals counts what the agent port refused, by reason
	// (agent.RefusalReason): no Gateway label, since whoever refused did
	// not prove which Gateway it serves.
	AgentRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_agent_refusals_total",
		Help: "RPCs the agent port refused, by reason: token (none, or one the API server does not authenticate for the agents), pod (the token's pod is not its Gateway's data plane: another ServiceAccount, a spec Gatewall did not render for it, a finished pod), address (a pod's token from another address than the pod's), labels (an agent configured for another Gateway), limit (a bound of the agent port), unavailable (the API server could not answer, the pod has no address yet: retried).",
	}, []string{LabelReason})
	// BundleFetches counts the attempts to fetch WAF bundles from PLM
	// storage, by result; BundleFetchSeconds and BundleFetchBytes are their
	// time and the bytes of those that succeeded.
	BundleFetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_bundle_fetches_total",
		Help: "Attempts to fetch a WAF bundle from PLM storage: fetched, fetch_error (storage unreachable or refusing; retried with backoff), integrity_error (its sha256 differs from PLM's; not retried).",
	}, []string{LabelResult})
	BundleFetchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "gatewall_bundle_fetch_duration_seconds", Buckets: latencyBuckets,
		Help: "Time of an attempt to fetch a WAF bundle from PLM storage, whatever its result.",
	})
	BundleFetchBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gatewall_bundle_fetch_bytes_total",
		Help: "Bytes of the WAF bundles fetched and verified.",
	})
	// Refused counts, per Gateway, the objects it refuses, by kind and reason.
	Refused = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gatewall_refused_objects",
		Help: "Objects a Gateway does not accept, by kind (Gateway, Listener, HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute, and every policy kind: ProxySettingsPolicy, ClientSettingsPolicy, RateLimitPolicy, UpstreamSettingsPolicy, WAFGatewayBindingPolicy, BackendTLSPolicy) and the reason of their Accepted=False condition (a route counts once per parentRef, a policy once per Gateway).",
	}, append(gatewayLabels, LabelKind, "reason"))
	// StatusWrites counts the status updates Gatewall sent the API server.
	StatusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatewall_status_writes_total",
		Help: "Status updates sent to the API server, by kind of object and result: written, conflict (the object changed meanwhile; retried), failed.",
	}, []string{LabelKind, LabelResult})
)

func init() {
	ctrlmetrics.Registry.MustRegister(TranslationSeconds, EndpointRefreshes, EndpointWakes, ConfigurationBytes, ConfigurationFiles,
		Pushes, Applies, ApplySeconds, Resyncs, AgentRefusals, StatusWrites, BundleFetches, BundleFetchSeconds, BundleFetchBytes, Refused)
}

// Gateway returns the label values of a Gateway's metrics.
func Gateway(gw types.NamespacedName) prometheus.Labels {
	return prometheus.Labels{LabelNamespace: gw.Namespace, LabelGateway: gw.Name}
}

// ForgetGateway drops the series of a Gateway that is gone, so that they do
// not accumulate as Gateways come and go.
func ForgetGateway(gw types.NamespacedName) {
	l := Gateway(gw)
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		TranslationSeconds, EndpointRefreshes, EndpointWakes, ConfigurationBytes, ConfigurationFiles, Pushes, Applies, ApplySeconds, Resyncs, Refused,
		EndpointUpdates, EndpointPropagationSeconds,
	} {
		v.DeletePartialMatch(l)
	}
}
