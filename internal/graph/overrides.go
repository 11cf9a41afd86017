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
// a load balancer public). The class's NginxProxy lets its Gateways do
// these with allowGatewayOverrides.

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
		if !allowed[v1alpha2.OverrideService] && k.Service != nil {
			k.Service = nil
			refused = append(refused, "kubernetes.service")
		}
	}
	return out, refused
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
