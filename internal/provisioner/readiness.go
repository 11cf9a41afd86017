package provisioner

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// readinessProbe makes a data-plane pod Ready only once NGINX runs a
// configuration Gatewall pushed, so that rollouts and scale-ups send no
// traffic to a pod still on the bootstrap configuration, which listens on
// no port. NGINX listens on every listener port exactly when it runs a
// configuration of the Gateway (the one just pushed, or the last good one
// it keeps after a failed push or a container restart).
//
// The probe reads the pod's listening TCP sockets (/proc/net/tcp and tcp6,
// state 0A) instead of connecting to them: a connection closed without a
// request would add a line to NGINX's error log at every probe. It needs
// only sh and grep in the image, and works as it is on a kubelet and on
// the local runtime's node. Without ports there is nothing to wait for.
func readinessProbe(ports []int32) *corev1.Probe {
	sorted := sortedPorts(ports)
	if len(sorted) == 0 {
		return nil
	}
	hex := make([]string, 0, len(sorted))
	for _, p := range sorted {
		hex = append(hex, fmt.Sprintf("%04X", p))
	}
	script := fmt.Sprintf("for port in %s; do "+
		`grep -qsE "^ *[0-9]+: [0-9A-F]+:$port [0-9A-F]+:[0-9A-F]+ 0A " /proc/net/tcp /proc/net/tcp6 || exit 1; `+
		"done", strings.Join(hex, " "))
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", script}}},
		PeriodSeconds:    2,
		TimeoutSeconds:   2,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
}
