package controller

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

// addressCondition returns the Gateway's Programmed=False condition while
// the addresses its spec requests are not the data plane Service's, or nil.
func addressCondition(requested []string, svc *corev1.Service) *metav1.Condition {
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
