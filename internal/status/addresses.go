package status

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
)

// ServiceConditionLoadBalancerIP is the Service condition a load balancer
// sets to False when it cannot give the Service its spec.loadBalancerIP
// (the local runtime's load balancer does). Without it, a requested address
// that has not appeared in the Service's status is reported as not assigned
// yet rather than unusable.
const ServiceConditionLoadBalancerIP = "LoadBalancerIPAssigned"

// AddressCondition returns the Gateway's Programmed=False condition while
// the addresses its spec requests are not the data plane Service's, or nil.
func AddressCondition(requested []string, svc *corev1.Service) *metav1.Condition {
	programmed := string(gatewayv1.GatewayConditionProgrammed)
	switch len(requested) {
	case 0:
		return nil
	case 1:
	default:
		c := conditions.False(programmed, string(gatewayv1.GatewayReasonAddressNotUsable),
			fmt.Sprintf("the data plane Service has one address; %s cannot all be assigned: request one", strings.Join(requested, ", ")))
		return &c
	}
	want := requested[0]
	if slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(in corev1.LoadBalancerIngress) bool { return in.IP == want }) {
		return nil
	}
	if lb := meta.FindStatusCondition(svc.Status.Conditions, ServiceConditionLoadBalancerIP); lb != nil && lb.Status == metav1.ConditionFalse {
		c := conditions.False(programmed, string(gatewayv1.GatewayReasonAddressNotUsable),
			fmt.Sprintf("address %s cannot be used: %s", want, lb.Message))
		return &c
	}
	c := conditions.False(programmed, string(gatewayv1.GatewayReasonAddressNotAssigned),
		fmt.Sprintf("waiting for the load balancer to assign address %s to Service %s", want, svc.Name))
	return &c
}

// ServiceAddresses are the addresses clients reach a Gateway's Service at:
// its load balancer's, else its cluster IPs.
func ServiceAddresses(svc *corev1.Service) []gatewayv1.GatewayStatusAddress {
	var out []gatewayv1.GatewayStatusAddress
	ip, host := gatewayv1.IPAddressType, gatewayv1.HostnameAddressType
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &ip, Value: in.IP})
		case in.Hostname != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &host, Value: in.Hostname})
		}
	}
	if len(out) == 0 && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		for _, c := range svc.Spec.ClusterIPs {
			if c != "" && c != corev1.ClusterIPNone {
				out = append(out, gatewayv1.GatewayStatusAddress{Type: &ip, Value: c})
			}
		}
	}
	return out
}

// NotProvisioned is the Gateway's Programmed=False condition while its
// data plane cannot be provisioned (err says why: an object of its name
// that is not Gatewall's, say).
func NotProvisioned(err error) *metav1.Condition {
	c := conditions.False(string(gatewayv1.GatewayConditionProgrammed), string(gatewayv1.GatewayReasonNoResources),
		"the data plane cannot be provisioned: "+err.Error())
	return &c
}

// DataPlaneRefused is the Gateway's Programmed=False condition while the
// API server refuses objects of its data plane as its NginxProxy makes
// them (err names them and why: an admission policy, most often the
// placement pins an installation relaxes).
func DataPlaneRefused(err error) *metav1.Condition {
	c := conditions.False(string(gatewayv1.GatewayConditionProgrammed), string(gatewayv1.GatewayReasonInvalid),
		"the data plane cannot be provisioned as its NginxProxy says: "+err.Error()+
			" (an admission policy's refusal: the installation allows the value, docs/security.md; other refusals: fix the NginxProxy)")
	return &c
}
