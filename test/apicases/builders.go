package apicases

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

func ptr[T any](v T) *T { return &v }

func target(kind, name string) gatewayv1.LocalPolicyTargetReference {
	return gatewayv1.LocalPolicyTargetReference{
		Group: gatewayv1.GroupName,
		Kind:  gatewayv1.Kind(kind),
		Name:  gatewayv1.ObjectName(name),
	}
}

func gatewayTarget() []gatewayv1.LocalPolicyTargetReference {
	return []gatewayv1.LocalPolicyTargetReference{target("Gateway", "gw")}
}

func manyTargets(n int) []gatewayv1.LocalPolicyTargetReference {
	refs := make([]gatewayv1.LocalPolicyTargetReference, n)
	for i := range refs {
		refs[i] = target("HTTPRoute", "route-"+string(rune('a'+i)))
	}
	return refs
}

func psp(mutate func(*v1alpha1.ProxySettingsPolicySpec)) *v1alpha1.ProxySettingsPolicy {
	p := &v1alpha1.ProxySettingsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec:       v1alpha1.ProxySettingsPolicySpec{TargetRefs: gatewayTarget()},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

// buffering is a PSP on a Gateway with these buffering settings; empty sizes are unset.
func buffering(bufferSize string, number int32, size, busy string) *v1alpha1.ProxySettingsPolicy {
	return psp(func(s *v1alpha1.ProxySettingsPolicySpec) {
		b := &v1alpha1.ProxyBuffering{}
		if bufferSize != "" {
			b.BufferSize = ptr(v1alpha1.Size(bufferSize))
		}
		if number != 0 {
			b.Buffers = &v1alpha1.ProxyBuffers{Number: number, Size: v1alpha1.Size(size)}
		}
		if busy != "" {
			b.BusyBuffersSize = ptr(v1alpha1.Size(busy))
		}
		s.Buffering = b
	})
}

func waf(mutate func(*v1alpha1.WAFGatewayBindingPolicySpec)) *v1alpha1.WAFGatewayBindingPolicy {
	p := &v1alpha1.WAFGatewayBindingPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: v1alpha1.WAFGatewayBindingPolicySpec{
			TargetRefs:     gatewayTarget(),
			APPolicySource: v1alpha1.PLMObjectReference{Name: "base-policy"},
		},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

// wafLog is a WAF policy with one security log going to dest.
func wafLog(dest v1alpha1.SecurityLogDestination) *v1alpha1.WAFGatewayBindingPolicy {
	return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
		s.SecurityLogs = []v1alpha1.SecurityLog{{
			APLogConfSource: v1alpha1.PLMObjectReference{Name: "log-all"},
			Destination:     dest,
		}}
	})
}

func fileLog(path string) *v1alpha1.WAFGatewayBindingPolicy {
	return wafLog(v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationFile, File: &v1alpha1.FileDestination{Path: path}})
}

func syslogLog(server string) *v1alpha1.WAFGatewayBindingPolicy {
	return wafLog(v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationSyslog, Syslog: &v1alpha1.SyslogDestination{Server: server}})
}

func np(mutate func(*v1alpha2.NginxProxySpec)) *v1alpha2.NginxProxy {
	p := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

// npL4 is an NginxProxy with these l4 settings.
func npL4(l4 v1alpha2.L4Listeners) *v1alpha2.NginxProxy {
	return np(func(s *v1alpha2.NginxProxySpec) { s.L4 = &l4 })
}

func npService(family string, svc v1alpha2.ServiceSpec) *v1alpha2.NginxProxy {
	return np(func(s *v1alpha2.NginxProxySpec) {
		if family != "" {
			s.IPFamily = ptr(v1alpha2.IPFamily(family))
		}
		s.Kubernetes = &v1alpha2.KubernetesSpec{Service: &svc}
	})
}

func svcType(t corev1.ServiceType) *corev1.ServiceType { return &t }
