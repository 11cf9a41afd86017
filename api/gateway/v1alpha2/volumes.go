package v1alpha2

import (
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReservedVolumeNames are the data plane's own volumes: pod.volumes does
// not name one of them (a second volume of the name would make the pod
// template invalid, or stand in for the agent's token or CA).
var ReservedVolumeNames = []string{
	"nginx-conf", "nginx-run", "nginx-cache", "nginx-log", "agent-lib", "agent-log", "agent-config", "agent-ca", "agent-token",
	"waf-bd-config", "waf-config", "waf-bundles", "waf-security-log",
}

// ReservedMountPaths are the directories the data plane mounts its own
// volumes on: NGINX's configuration, run, cache and log directories, the
// agent's, its token and CA, App Protect's. A volumeMount on, inside or
// over one of them would hide or replace what Gatewall puts there.
var ReservedMountPaths = []string{
	"/etc/nginx", "/var/run/nginx", "/var/cache/nginx", "/var/log/nginx", "/var/lib/nginx-agent", "/var/log/nginx-agent",
	"/etc/nginx-agent", "/var/run/secrets/gatewall", "/etc/app_protect", "/opt/app_protect", "/var/log/app_protect",
}

// UsableVolumes are the pod's volumes the data plane takes: those not
// named as one of its own (ReservedVolumeNames); the others' names are
// returned apart, in order.
func UsableVolumes(p *PodSpec) (use []corev1.Volume, left []string) {
	if p == nil {
		return nil, nil
	}
	for _, v := range p.Volumes {
		if slices.Contains(ReservedVolumeNames, v.Name) {
			left = append(left, v.Name)
			continue
		}
		use = append(use, v)
	}
	return use, left
}

// UsableVolumeMounts are the NGINX container's volumeMounts the data plane
// takes: of a volume among volumes (UsableVolumes), at an absolute path
// neither on, inside nor over one of ReservedMountPaths, without
// Bidirectional propagation (which needs a privileged container). The
// others' paths are returned apart, in order.
func UsableVolumeMounts(c *ContainerSpec, volumes []corev1.Volume) (use []corev1.VolumeMount, left []string) {
	if c == nil {
		return nil, nil
	}
	for _, m := range c.VolumeMounts {
		ok := path.IsAbs(m.MountPath) && !reservedPath(m.MountPath) &&
			(m.MountPropagation == nil || *m.MountPropagation != corev1.MountPropagationBidirectional) &&
			slices.ContainsFunc(volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if !ok {
			left = append(left, m.MountPath)
			continue
		}
		use = append(use, m)
	}
	return use, left
}

// reservedPath says whether p is on, inside or over a reserved directory.
func reservedPath(p string) bool {
	p = path.Clean(p)
	for _, r := range ReservedMountPaths {
		if p == r || strings.HasPrefix(p, r+"/") || p == "/" || strings.HasPrefix(r, p+"/") {
			return true
		}
	}
	return false
}
