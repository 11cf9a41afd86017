package apicases

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// limitCases put every schema limit of the CRDs (maxItems, maxLength,
// maximum, enums) at its bound, accepted, and just past it, rejected: the
// Go re-validation must draw each line where the API server does.
func limitCases() []Case {
	var cs []Case
	for _, kind := range []string{"ProxySettingsPolicy", "WAFGatewayBindingPolicy"} {
		named := func(name string) client.Object {
			refs := []gatewayv1.LocalPolicyTargetReference{target("Gateway", name)}
			if kind == "ProxySettingsPolicy" {
				return psp(func(s *v1alpha1.ProxySettingsPolicySpec) { s.TargetRefs = refs })
			}
			return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) { s.TargetRefs = refs })
		}
		cs = append(cs,
			Case{Name: kind + ": target name of 253 characters", Object: named(strings.Repeat("a", 253))},
			Case{Name: kind + ": target name of 254 characters", Object: named(strings.Repeat("a", 254)), Field: targets + "[0].name", Message: "may not be more than 253 bytes"},
			Case{Name: kind + ": empty target name", Object: named(""), Field: targets + "[0].name", Message: "should be at least 1 chars long"},
		)
	}
	cs = append(cs, wafLimitCases()...)
	cs = append(cs, nginxProxyLimitCases()...)
	return cs
}

func wafLimitCases() []Case {
	const src = "spec.apPolicySource"
	logs := func(n int) *v1alpha1.WAFGatewayBindingPolicy {
		return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			for i := range n {
				s.SecurityLogs = append(s.SecurityLogs, v1alpha1.SecurityLog{
					Name:            ptr(fmt.Sprintf("log-%d", i)),
					APLogConfSource: v1alpha1.PLMObjectReference{Name: "log-all"},
				})
			}
		})
	}
	logName := func(name string) *v1alpha1.WAFGatewayBindingPolicy {
		return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.SecurityLogs = []v1alpha1.SecurityLog{{Name: ptr(name), APLogConfSource: v1alpha1.PLMObjectReference{Name: "log-all"}}}
		})
	}
	policyName := func(name string) *v1alpha1.WAFGatewayBindingPolicy {
		return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) { s.APPolicySource.Name = name })
	}
	policyNamespace := func(ns string) *v1alpha1.WAFGatewayBindingPolicy {
		return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) { s.APPolicySource.Namespace = ptr(ns) })
	}
	const dest = "spec.securityLogs[0].destination"
	// Four labels of 63 characters: a host of 255 characters, which the
	// pattern allows; the port makes the length.
	host := strings.Join([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 63)}, ".")
	return []Case{
		{Name: "WAF: 16 security logs", Object: logs(16)},
		{Name: "WAF: 17 security logs", Object: logs(17), Field: "spec.securityLogs", Message: "must have at most 16 items"},
		{Name: "WAF: APPolicy name of 253 characters", Object: policyName(strings.Repeat("a", 253))},
		{Name: "WAF: APPolicy name of 254 characters", Object: policyName(strings.Repeat("a", 254)), Field: src + ".name", Message: "may not be more than 253 bytes"},
		{Name: "WAF: APPolicy namespace of 63 characters", Object: policyNamespace(strings.Repeat("a", 63))},
		{Name: "WAF: APPolicy namespace of 64 characters", Object: policyNamespace(strings.Repeat("a", 64)), Field: src + ".namespace", Message: "may not be more than 63 bytes"},
		{Name: "WAF: security log name of 63 characters", Object: logName(strings.Repeat("a", 63))},
		{Name: "WAF: security log name of 64 characters", Object: logName(strings.Repeat("a", 64)), Field: "spec.securityLogs[0].name", Message: "may not be more than 63 bytes"},
		{Name: "WAF: file path of 128 characters", Object: fileLog(v1alpha1.SecurityLogFileDir + strings.Repeat("a", 128-len(v1alpha1.SecurityLogFileDir)))},
		{Name: "WAF: file path of 129 characters", Object: fileLog(v1alpha1.SecurityLogFileDir + strings.Repeat("a", 129-len(v1alpha1.SecurityLogFileDir))), Field: dest + ".file.path", Message: "may not be more than 128 bytes"},
		{Name: "WAF: syslog server of 259 characters", Object: syslogLog(host + ":514")},
		{Name: "WAF: syslog server of 260 characters", Object: syslogLog(host + ":5140"), Field: dest + ".syslog.server", Message: "may not be more than 259 bytes"},
	}
}

func nginxProxyLimitCases() []Case {
	const (
		svc        = "spec.kubernetes.service"
		deployment = "spec.kubernetes.deployment"
	)
	replicas := func(n int32) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr(n)}}
		})
	}
	image := func(img v1alpha2.Image) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Container: &v1alpha2.ContainerSpec{Image: &img}}}
		})
	}
	ranges := func(n int) []string {
		r := make([]string, n)
		for i := range r {
			r[i] = fmt.Sprintf("10.%d.0.0/16", i)
		}
		return r
	}
	trafficPolicy := corev1.ServiceExternalTrafficPolicy("Remote")
	return []Case{
		{Name: "NginxProxy: replicas 1000", Object: replicas(1000)},
		{Name: "NginxProxy: replicas 1001", Object: replicas(1001), Field: deployment + ".replicas", Message: "should be less than or equal to 1000"},
		{Name: "NginxProxy: image repository of 255 characters", Object: image(v1alpha2.Image{Repository: ptr(strings.Repeat("a", 255))})},
		{Name: "NginxProxy: image repository of 256 characters", Object: image(v1alpha2.Image{Repository: ptr(strings.Repeat("a", 256))}), Field: deployment + ".container.image.repository", Message: "may not be more than 255 bytes"},
		{Name: "NginxProxy: empty image repository", Object: image(v1alpha2.Image{Repository: ptr("")}), Field: deployment + ".container.image.repository", Message: "should be at least 1 chars long"},
		{Name: "NginxProxy: image tag of 128 characters", Object: image(v1alpha2.Image{Tag: ptr(strings.Repeat("a", 128))})},
		{Name: "NginxProxy: image tag of 129 characters", Object: image(v1alpha2.Image{Tag: ptr(strings.Repeat("a", 129))}), Field: deployment + ".container.image.tag", Message: "may not be more than 128 bytes"},
		{Name: "NginxProxy: pullPolicy Never", Object: image(v1alpha2.Image{PullPolicy: ptr(corev1.PullNever)})},
		{Name: "NginxProxy: pullPolicy Sometimes", Object: image(v1alpha2.Image{PullPolicy: ptr(corev1.PullPolicy("Sometimes"))}), Field: deployment + ".container.image.pullPolicy", Message: `Unsupported value: "Sometimes"`},
		{Name: "NginxProxy: externalTrafficPolicy Remote", Object: npService("", v1alpha2.ServiceSpec{ExternalTrafficPolicy: &trafficPolicy}), Field: svc + ".externalTrafficPolicy", Message: `Unsupported value: "Remote"`},
		{Name: "NginxProxy: 64 source ranges", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: ranges(64)})},
		{Name: "NginxProxy: 65 source ranges", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: ranges(65)}), Field: svc + ".loadBalancerSourceRanges", Message: "must have at most 64 items"},
		// The longest CIDR text: an IPv6 address ending in dotted IPv4, /128.
		{Name: "NginxProxy: source range of 49 characters", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: []string{"2001:0db8:0000:0000:0000:0000:255.255.255.255/128"}})},
		{Name: "NginxProxy: source range of 50 characters", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: []string{strings.Repeat("1", 50)}}), Field: svc + ".loadBalancerSourceRanges[0]", Message: "may not be more than 49 bytes"},
		{Name: "NginxProxy: loadBalancerIP of 46 characters", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerIP: ptr(strings.Repeat("1", 46))}), Field: svc + ".loadBalancerIP", Message: "may not be more than 45 bytes"},
	}
}
