package graph

import (
	"fmt"
	"sort"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// The trust boundary between a GatewayClass and its Gateways
// (docs/security.md): whoever owns a Gateway may tune its data plane, but
// not choose what runs with the keys of every certificate the Gateway
// serves (images and pull policies), nor who can reach it (the Service's
// exposure), nor whose word about a client's address every route's
// backends, logs and rate limits take (rewriteClientIP's trusted peers,
// and disableBaseHeaders, which lets clients' own X-Forwarded-For and
// X-Real-IP through), nor put prefixed labels and annotations on its
// objects, which other controllers act on (a Service annotation can make
// a load balancer public), nor choose the nodes its pods run on, what of
// the node or the namespace they mount, the node ports they bind or the
// commands their hooks run in the NGINX container (dropPodShaping). The
// class's NginxProxy lets its Gateways do these with allowGatewayOverrides.

// allowedOverrides returns the spec of the Gateway's NginxProxy as its class
// lets it apply (nil when the Gateway has none), and the fields left out,
// by path.
func allowedOverrides(class, gateway *v1alpha2.NginxProxy) (*v1alpha2.NginxProxySpec, []string) {
	if gateway == nil {
		return nil, nil
	}
	allowed := overrideFields(class)
	out := gateway.Spec.DeepCopy()
	var refused []string
	if out.AllowGatewayOverrides != nil {
		out.AllowGatewayOverrides = nil
		refused = append(refused, "allowGatewayOverrides")
	}
	if !allowed[v1alpha2.OverrideRewriteClientIP] && out.RewriteClientIP != nil {
		out.RewriteClientIP = nil
		refused = append(refused, "rewriteClientIP")
	}
	if !allowed[v1alpha2.OverrideDisableBaseHeaders] && out.DisableBaseHeaders != nil {
		out.DisableBaseHeaders = nil
		refused = append(refused, "disableBaseHeaders")
	}
	if k := out.Kubernetes; k != nil {
		if !allowed[v1alpha2.OverrideImages] && k.Deployment != nil {
			refused = append(refused, dropImages("kubernetes.deployment", k.Deployment.Container, k.Deployment.WAFContainers)...)
		}
		if !allowed[v1alpha2.OverrideImages] && k.DaemonSet != nil {
			refused = append(refused, dropImages("kubernetes.daemonSet", k.DaemonSet.Container, k.DaemonSet.WAFContainers)...)
		}
		for _, w := range []struct {
			path string
			d    *v1alpha2.DeploymentSpec
		}{{"kubernetes.deployment", k.Deployment}, {"kubernetes.daemonSet", daemonSetPods(k.DaemonSet)}} {
			if w.d != nil {
				refused = append(refused, dropPodShaping(w.path, allowed, w.d.Pod, w.d.Container)...)
			}
		}
		if !allowed[v1alpha2.OverridePatches] {
			if d := k.Deployment; d != nil && d.Patches != nil {
				d.Patches = nil
				refused = append(refused, "kubernetes.deployment.patches")
			}
			if ds := k.DaemonSet; ds != nil && ds.Patches != nil {
				ds.Patches = nil
				refused = append(refused, "kubernetes.daemonSet.patches")
			}
			if svc := k.Service; svc != nil && svc.Patches != nil && allowed[v1alpha2.OverrideService] {
				svc.Patches = nil
				refused = append(refused, "kubernetes.service.patches")
			}
		}
		if !allowed[v1alpha2.OverrideService] && k.Service != nil {
			k.Service = nil
			refused = append(refused, "kubernetes.service")
		}
	}
	return out, refused
}

// daemonSetPods is a DaemonSet's pod settings, sharing ds's pointers
// (nil without one).
func daemonSetPods(ds *v1alpha2.DaemonSetSpec) *v1alpha2.DeploymentSpec {
	if ds == nil {
		return nil
	}
	return &v1alpha2.DeploymentSpec{Pod: ds.Pod, Container: ds.Container}
}

// dropPodShaping clears the placement and node-reaching settings of a
// workload (under path) its class does not let a Gateway set: the pods'
// affinity, nodeSelector and tolerations (Scheduling), volumes and the
// NGINX container's volumeMounts (Volumes), its hostPorts (HostPorts) and
// lifecycle hooks (Lifecycle). It returns the paths of those that were set.
func dropPodShaping(path string, allowed map[v1alpha2.GatewayOverrideField]bool, pod *v1alpha2.PodSpec, c *v1alpha2.ContainerSpec) []string {
	var refused []string
	drop := func(field v1alpha2.GatewayOverrideField, name string, set bool, clear func()) {
		if set && !allowed[field] {
			clear()
			refused = append(refused, path+"."+name)
		}
	}
	if pod != nil {
		drop(v1alpha2.OverrideScheduling, "pod.affinity", pod.Affinity != nil, func() { pod.Affinity = nil })
		drop(v1alpha2.OverrideScheduling, "pod.nodeSelector", pod.NodeSelector != nil, func() { pod.NodeSelector = nil })
		drop(v1alpha2.OverrideScheduling, "pod.tolerations", pod.Tolerations != nil, func() { pod.Tolerations = nil })
		drop(v1alpha2.OverrideVolumes, "pod.volumes", pod.Volumes != nil, func() { pod.Volumes = nil })
	}
	if c != nil {
		drop(v1alpha2.OverrideVolumes, "container.volumeMounts", c.VolumeMounts != nil, func() { c.VolumeMounts = nil })
		drop(v1alpha2.OverrideHostPorts, "container.hostPorts", c.HostPorts != nil, func() { c.HostPorts = nil })
		drop(v1alpha2.OverrideLifecycle, "container.lifecycle", c.Lifecycle != nil, func() { c.Lifecycle = nil })
	}
	return refused
}

// overrideFields are the fields the class's NginxProxy lets Gateways set.
func overrideFields(class *v1alpha2.NginxProxy) map[v1alpha2.GatewayOverrideField]bool {
	out := map[v1alpha2.GatewayOverrideField]bool{}
	if class != nil && class.Spec.AllowGatewayOverrides != nil {
		for _, f := range class.Spec.AllowGatewayOverrides.Fields {
			out[f] = true
		}
	}
	return out
}

// dropImages clears the images (and pull policies) of a workload's
// containers (under path), returning the paths of those that were set.
func dropImages(path string, main *v1alpha2.ContainerSpec, waf *v1alpha2.WAFContainers) []string {
	var refused []string
	drop := func(path string, c *v1alpha2.ContainerSpec) {
		if c != nil && c.Image != nil {
			c.Image = nil
			refused = append(refused, path+".image")
		}
	}
	drop(path+".container", main)
	if waf != nil {
		drop(path+".wafContainers.enforcer", waf.Enforcer)
		drop(path+".wafContainers.configManager", waf.ConfigManager)
	}
	return refused
}

// InfrastructureMetadata returns the labels and annotations of the
// Gateway's spec.infrastructure that reach its data-plane objects and pods:
// unprefixed keys, and prefixed ones its effective NginxProxy's
// allowGatewayOverrides.infrastructureKeys list (a key, or a prefix ending
// in "/"); and, sorted, the keys left out.
func InfrastructureMetadata(gw *gatewayv1.Gateway, np *v1alpha2.NginxProxySpec) (labels, annotations map[string]string, refused []string) {
	infra := gw.Spec.Infrastructure
	if infra == nil {
		return nil, nil, nil
	}
	var keys []string
	if np != nil && np.AllowGatewayOverrides != nil {
		keys = np.AllowGatewayOverrides.InfrastructureKeys
	}
	keep := func(kind, k string) bool {
		if infrastructureKeyAllowed(k, keys) {
			return true
		}
		refused = append(refused, kind+" "+k)
		return false
	}
	for k, v := range infra.Labels {
		if keep("label", string(k)) {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[string(k)] = string(v)
		}
	}
	for k, v := range infra.Annotations {
		if keep("annotation", string(k)) {
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[string(k)] = string(v)
		}
	}
	sort.Strings(refused)
	return labels, annotations, refused
}

// infrastructureKeyAllowed says whether a label or annotation key may reach
// the data plane: unprefixed keys always; a prefixed one when allowed lists
// it or its prefix ("example.com/").
func infrastructureKeyAllowed(k string, allowed []string) bool {
	slash := strings.LastIndexByte(k, '/')
	if slash < 0 {
		return true
	}
	for _, a := range allowed {
		if a == k || (strings.HasSuffix(a, "/") && a == k[:slash+1]) {
			return true
		}
	}
	return false
}

// overridesNote is what the Gateway's Accepted message adds when its class
// left some of its NginxProxy or spec.infrastructure out ("" when nothing).
func overridesNote(class *v1alpha2.NginxProxy, gateway *v1alpha2.NginxProxy, fields, keys []string) string {
	var parts []string
	if len(fields) > 0 {
		parts = append(parts, fmt.Sprintf("NginxProxy %s/%s sets %s, which only the GatewayClass's NginxProxy%s may let a Gateway set (allowGatewayOverrides): the class's values are used",
			gateway.Namespace, gateway.Name, strings.Join(fields, ", "), classNginxProxyName(class)))
	}
	if len(keys) > 0 {
		parts = append(parts, "spec.infrastructure "+strings.Join(keys, ", ")+
			" not put on the data plane: prefixed keys reach it only when the GatewayClass's NginxProxy lists them (allowGatewayOverrides.infrastructureKeys)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func classNginxProxyName(class *v1alpha2.NginxProxy) string {
	if class == nil {
		return ""
	}
	return " (" + class.Namespace + "/" + class.Name + ")"
}
