package graph

import (
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// podNotProgrammed lists what of the workload's pod-shaping settings the
// data plane does not carry out, each "field: why": the readiness probe's
// port and path but NGINX Gateway Fabric's defaults (8081, /readyz), and
// its exposure (the probe is the data plane's own: a port no listener of
// the Gateway takes, answered by every configuration Gatewall pushes),
// and volumes and mounts of the data plane's own names and
// directories (v1alpha2.UsableVolumes, UsableVolumeMounts).
func podNotProgrammed(s *v1alpha2.NginxProxySpec) []string {
	d := s.Workload()
	if d == nil {
		return nil
	}
	path := "kubernetes.deployment"
	if s.IsDaemonSet() {
		path = "kubernetes.daemonSet"
	}
	var out []string
	if c := d.Container; c != nil && c.ReadinessProbe != nil {
		var fields []string
		// NGINX Gateway Fabric's defaults are the data plane's own.
		if p := c.ReadinessProbe.Port; p != nil && *p != firstReadinessPort {
			fields = append(fields, "port")
		}
		if p := c.ReadinessProbe.Path; p != nil && *p != readinessPath {
			fields = append(fields, "path")
		}
		if c.ReadinessProbe.Expose != nil && *c.ReadinessProbe.Expose {
			fields = append(fields, "expose")
		}
		if len(fields) > 0 {
			out = append(out, path+".container.readinessProbe."+braced(fields)+
				": the data plane's readiness is answered at /readyz on the first port from 8081 up that no listener of the Gateway uses, not on the Service; initialDelaySeconds is used")
		}
	}
	volumes, left := v1alpha2.UsableVolumes(d.Pod)
	if len(left) > 0 {
		out = append(out, path+".pod.volumes "+strings.Join(left, ", ")+": left out: named as a volume of the data plane's own")
	}
	if _, left := v1alpha2.UsableVolumeMounts(d.Container, volumes); len(left) > 0 {
		out = append(out, path+".container.volumeMounts "+strings.Join(left, ", ")+
			": left out: on, inside or over a directory of the data plane's own, of no volume of pod.volumes, or Bidirectional")
	}
	return out
}

// readinessPath is where NGINX answers the readiness probe
// (config.ReadinessPath, which the pure core does not import).
const readinessPath = "/readyz"

// braced names one field as it is, several as {a, b}.
func braced(fields []string) string {
	if len(fields) == 1 {
		return fields[0]
	}
	return "{" + strings.Join(fields, ", ") + "}"
}
