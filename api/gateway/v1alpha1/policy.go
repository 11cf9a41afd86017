package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Policy is a Gatewall policy object (GEP-713): an object that targets
// Gateway API objects in its own namespace.
//
// +kubebuilder:object:generate=false
type Policy interface {
	metav1.Object
	runtime.Object
	// PolicyTargetRefs are the policy's targets, whatever its spec calls them.
	PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference
}

// PolicyWithStatus is a policy whose status holds the Gateway API's
// PolicyStatus (WAFGatewayBindingPolicy's also holds its bundles).
//
// +kubebuilder:object:generate=false
type PolicyWithStatus interface {
	Policy
	// PolicyStatus is the policy's status, to read and to set.
	PolicyStatus() *gatewayv1.PolicyStatus
}

// PolicyTargetRefs are the policy's targetRefs.
func (p *ProxySettingsPolicy) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	return p.Spec.TargetRefs
}

// PolicyTargetRefs are the policy's targetRefs.
func (p *WAFGatewayBindingPolicy) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	return p.Spec.TargetRefs
}

// PolicyStatus is the policy's ancestor status, to read and to set.
func (p *WAFGatewayBindingPolicy) PolicyStatus() *gatewayv1.PolicyStatus {
	return &p.Status.PolicyStatus
}

// PolicyStatus is the policy's status, to read and to set.
func (p *ProxySettingsPolicy) PolicyStatus() *gatewayv1.PolicyStatus { return &p.Status }

// PolicyStatus is the policy's status, to read and to set.
func (p *ClientSettingsPolicy) PolicyStatus() *gatewayv1.PolicyStatus { return &p.Status }

// PolicyStatus is the policy's status, to read and to set.
func (p *RateLimitPolicy) PolicyStatus() *gatewayv1.PolicyStatus { return &p.Status }

// PolicyTargetRefs are the policy's targetRefs.
func (p *UpstreamSettingsPolicy) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	return p.Spec.TargetRefs
}

// PolicyStatus is the policy's status, to read and to set.
func (p *UpstreamSettingsPolicy) PolicyStatus() *gatewayv1.PolicyStatus { return &p.Status }
