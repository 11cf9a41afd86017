// Package v1 holds stand-in APPolicy and APLogConf types of PLM's
// appprotect.f5.com/v1 API, for tests and local runs only. Their CRDs are not part
// of `make deploy`: PLM installs the real ones. Gatewall reads only status.
//
// +kubebuilder:object:generate=true
// +groupName=appprotect.f5.com
package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"

	"github.com/gatewall/gatewall/api/plm"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "appprotect.f5.com", Version: "v1"}

	// SchemeBuilder registers the objects of this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the objects of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// APPolicy is a WAF policy that PLM compiles into a bundle.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.bundle.state`
type APPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the WAF policy; opaque to Gatewall.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *apiextensionsv1.JSON `json:"spec,omitempty"`

	// Status is where PLM reports the compiled bundle.
	// +optional
	Status plm.Status `json:"status,omitempty"`
}

// APPolicyList is a list of APPolicies.
//
// +kubebuilder:object:root=true
type APPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APPolicy `json:"items"`
}

// APLogConf is a security log profile that PLM compiles into a bundle.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.bundle.state`
type APLogConf struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the log profile; opaque to Gatewall.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec *apiextensionsv1.JSON `json:"spec,omitempty"`

	// Status is where PLM reports the compiled bundle.
	// +optional
	Status plm.Status `json:"status,omitempty"`
}

// APLogConfList is a list of APLogConfs.
//
// +kubebuilder:object:root=true
type APLogConfList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APLogConf `json:"items"`
}

func init() {
	SchemeBuilder.Register(&APPolicy{}, &APPolicyList{}, &APLogConf{}, &APLogConfList{})
}
