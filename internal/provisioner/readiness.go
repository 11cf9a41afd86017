package provisioner

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// readinessProbe makes a data-plane pod Ready only once NGINX runs a
// configuration Gatewall pushed, so that rollouts and scale-ups send no
// traffic to a pod still on the bootstrap configuration, which listens on
// no port. Every pushed configuration (the one just pushed, or the last
// good one NGINX keeps after a failed push or a container restart) answers
// config.ReadinessPath on the Gateway's readiness port, and NGINX either
// runs all of a configuration or none of it, so an answer there means it
// listens on every listener port too.
//
// The kubelet sends the request itself. A probe running a command in the
// container (as this one did, reading /proc/net/tcp) costs the node a
// process start in the pod at every period: at make scale's 40 data-plane
// pods, 0.6-1.1 of the two cores. The server does not log the probes.
// Without a readiness port (every candidate taken) there is no probe.
func readinessProbe(port int32) *corev1.Probe {
	if port == 0 {
		return nil
	}
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: config.ReadinessPath, Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP,
		}},
		PeriodSeconds:    2,
		TimeoutSeconds:   2,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
}
