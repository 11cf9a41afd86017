package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// SnippetsPolicy inserts NGINX configuration written by hand into the
// configuration of the Gateways it targets: its http snippet at http
// level, its http.server snippet in each of their servers, its
// http.server.location snippet in each location of their routes. It is
// NGINX Gateway Fabric's SnippetsPolicy, field for field, so its manifests
// apply unchanged.
//
// Snippets are a privilege of the installation: Gatewall reads them only
// when its manager runs with --snippets. Each snippet is read as NGINX
// reads configuration and held to an allow-list of directives for its
// context (docs/snippets.md); a policy with a snippet outside it is not
// accepted, and nothing of it is used.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api;nginx-gateway-fabric,scope=Namespaced,shortName=snippetspolicy
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=direct"
type SnippetsPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the targets and the snippets.
	Spec SnippetsPolicySpec `json:"spec"`

	// Status is the state of the policy per ancestor (Gateway), as set by Gatewall.
	// +optional
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SnippetsPolicyList contains a list of SnippetsPolicies.
type SnippetsPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SnippetsPolicy `json:"items"`
}

// SnippetsPolicySpec holds a policy's targets and snippets.
type SnippetsPolicySpec struct {
	// TargetRefs are the Gateways, in the policy's own namespace, whose
	// configuration gets the snippets. Each appears at most once.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:message="TargetRef Kind must be: Gateway",rule="self.all(t, t.kind == 'Gateway')"
	// +kubebuilder:validation:XValidation:message="TargetRef Name must be unique",rule="self.all(p1, self.exists_one(p2, (p1.name == p2.name)))"
	// +kubebuilder:validation:XValidation:message="TargetRef Group must be gateway.networking.k8s.io",rule="self.all(t, t.group == 'gateway.networking.k8s.io')"
	TargetRefs []gatewayv1.LocalPolicyTargetReference `json:"targetRefs"`

	// Snippets are the snippets, at most one per context. The main
	// snippet can hold no directive (Gatewall sets those a data plane
	// needs; the others load code, read files or change how the process
	// runs), and the http one declarations only (it would otherwise reach
	// Gatewall's own servers: its readiness and endpoints servers).
	//
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:XValidation:message="Only one snippet allowed per context",rule="self.all(s1, self.exists_one(s2, s1.context == s2.context))"
	Snippets []Snippet `json:"snippets,omitempty"`
}

// PolicyTargetRefs are the policy's targetRefs.
func (p *SnippetsPolicy) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	return p.Spec.TargetRefs
}

// PolicyStatus is the policy's status, to read and to set.
func (p *SnippetsPolicy) PolicyStatus() *gatewayv1.PolicyStatus { return &p.Status }

func init() {
	SchemeBuilder.Register(&SnippetsPolicy{}, &SnippetsPolicyList{})
}
