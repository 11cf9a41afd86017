package provisioner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// How a data-plane pod leaves without losing a request. When a pod is
// deleted (a scale-in, a rollout, an eviction), its endpoints turn not
// ready in its Service's EndpointSlices at once, but the load balancers
// and kube-proxy that read them stop sending it new connections only a
// moment later. NGINX must take connections until then: the NGINX
// container's preStop hook sleeps drainSeconds before the kubelet sends
// SIGTERM, on which the container stops NGINX gracefully (SIGQUIT: it
// closes its listening sockets, finishes the requests in progress, and its
// workers keep their connections at most workerShutdownTimeout). Without
// the pause, NGINX closed its listeners as the pod was deleted, and the
// connections sent to it in the meantime were refused or reset.
//
// The pause is the kubelet's own sleep action, not a command run in the
// container.

// drainSeconds is how long a deleted data-plane pod's NGINX keeps taking
// new connections: the time the load balancers in front of it take to
// notice (kube-proxy and the local runtime's load balancer take about a
// second; cloud load balancers deregistering a target take longer, and
// keep the connections they have).
const drainSeconds = 10

// graceMargin is the time past the drain and workerShutdownTimeout the
// default termination grace leaves NGINX to exit.
const graceMargin = 5

// defaultMinGrace is Kubernetes' own default termination grace, the least
// Gatewall's default is.
const defaultMinGrace = 30

// terminationGrace is the pods' terminationGracePeriodSeconds: the
// NginxProxy's, else long enough for the drain and workerShutdownTimeout,
// and at least Kubernetes' 30 s.
func terminationGrace(np *v1alpha2.NginxProxySpec) *int64 {
	if d := np.Workload(); d != nil && d.Pod != nil && d.Pod.TerminationGracePeriodSeconds != nil {
		return ptr.To(*d.Pod.TerminationGracePeriodSeconds)
	}
	return ptr.To(max(defaultMinGrace, drainSeconds+workerShutdownSeconds(np)+graceMargin))
}

// workerShutdownSeconds is the NginxProxy's workerShutdownTimeout (or its
// default), rounded up to seconds.
func workerShutdownSeconds(np *v1alpha2.NginxProxySpec) int64 {
	s := v1alpha2.DefaultWorkerShutdownTimeout
	if np.WorkerShutdownTimeout != nil {
		s = string(*np.WorkerShutdownTimeout)
	}
	d, err := validation.GatewayDuration(s)
	if err != nil {
		d, _ = validation.GatewayDuration(v1alpha2.DefaultWorkerShutdownTimeout)
	}
	return int64((d + time.Second - 1) / time.Second)
}

// drainLifecycle is the NGINX container's preStop pause: drainSeconds, or
// the whole termination grace when that is shorter (Kubernetes refuses a
// pause longer than the grace); none when the grace is 0.
func drainLifecycle(grace *int64) *corev1.Lifecycle {
	seconds := int64(drainSeconds)
	if grace != nil {
		seconds = min(seconds, *grace)
	}
	if seconds <= 0 {
		return nil
	}
	return &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: seconds}}}
}
