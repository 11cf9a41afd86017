package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SnippetsFilter inserts NGINX configuration written by hand into the
// configuration of the route rules that name it in an ExtensionRef filter
// (HTTPRoute and GRPCRoute). It is NGINX Gateway Fabric's SnippetsFilter,
// field for field, so its manifests apply unchanged.
//
// Snippets are a privilege of the installation: Gatewall reads them only
// when its manager runs with --snippets. Each snippet is read as NGINX
// reads configuration and held to an allow-list of directives for its
// context (docs/snippets.md); a filter with a snippet outside it is not
// accepted, and the rules that name it answer 500 rather than run
// without it.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api;nginx-gateway-fabric,scope=Namespaced,shortName=snippetsfilter
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SnippetsFilter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the snippets.
	Spec SnippetsFilterSpec `json:"spec"`

	// Status is the filter's status, per controller.
	// +optional
	Status SnippetsFilterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// SnippetsFilterList contains a list of SnippetsFilters.
type SnippetsFilterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SnippetsFilter `json:"items"`
}

// SnippetsFilterSpec holds a filter's snippets.
type SnippetsFilterSpec struct {
	// Snippets are the snippets, at most one per context. The
	// http.server.location snippet goes into the locations of the rules
	// that name the filter; the http one once at http level (declarations
	// only: it would otherwise change every route of the Gateway); main
	// and http.server snippets can hold no directive, for the same reason.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:XValidation:message="Only one snippet allowed per context",rule="self.all(s1, self.exists_one(s2, s1.context == s2.context))"
	Snippets []Snippet `json:"snippets"`
}

// Snippet is NGINX configuration for one context.
type Snippet struct {
	// Context is where in NGINX's configuration the snippet goes.
	Context NginxContext `json:"context"`

	// Value is the configuration, as written in an NGINX configuration
	// file: directives ending in ';', blocks in braces, comments from '#'.
	// Only the directives docs/snippets.md lists for the context are
	// accepted, each with arguments NGINX accepts.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	Value string `json:"value"`
}

// NginxContext is a context of NGINX's configuration.
//
// +kubebuilder:validation:Enum=main;http;http.server;http.server.location
type NginxContext string

// The contexts of NGINX's configuration a snippet can go into.
const (
	// NginxContextMain is the main context: the whole NGINX process.
	NginxContextMain NginxContext = "main"
	// NginxContextHTTP is the http context: every server.
	NginxContextHTTP NginxContext = "http"
	// NginxContextHTTPServer is a server: a port and hostname's routes.
	NginxContextHTTPServer NginxContext = "http.server"
	// NginxContextHTTPServerLocation is a location: a path of a route.
	NginxContextHTTPServerLocation NginxContext = "http.server.location"
)

// SnippetsFilterStatus is a filter's status.
type SnippetsFilterStatus struct {
	// Controllers are the status each controller that read the filter
	// gives it.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Controllers []ControllerStatus `json:"controllers,omitempty"`
}

// Conditions of snippets' objects (SnippetsFilter's controllers[] entry,
// SnippetsPolicy's ancestors).
const (
	// SnippetsFilterConditionAccepted says whether the filter's snippets
	// are read and allowed. Reasons Accepted, Invalid, SnippetsDisabled.
	SnippetsFilterConditionAccepted = "Accepted"

	SnippetsFilterReasonAccepted = "Accepted"
	SnippetsFilterReasonInvalid  = "Invalid"
	// SnippetsReasonDisabled: the installation does not enable snippets
	// (the manager's --snippets); nothing of the object is used.
	SnippetsReasonDisabled = "SnippetsDisabled"
)

func init() {
	SchemeBuilder.Register(&SnippetsFilter{}, &SnippetsFilterList{})
}
