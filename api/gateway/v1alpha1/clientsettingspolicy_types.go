package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ClientSettingsPolicyAffected is the condition type Gatewall sets on every
// Gateway, HTTPRoute and GRPCRoute affected by a ClientSettingsPolicy.
const ClientSettingsPolicyAffected = "gateway.nginx.org/ClientSettingsPolicyAffected"

// ClientSettingsPolicy is an inherited policy (GEP-713) that configures how
// NGINX treats the connections of clients and the bodies of their requests. A
// policy on a Gateway is the default for every route attached to it; a policy
// on an HTTPRoute or GRPCRoute overrides the Gateway's field by field. The
// object is the same as NGINX Gateway Fabric's ClientSettingsPolicy, so its
// manifests apply unchanged.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api,scope=Namespaced,shortName=cspolicy;clientsettings
// +kubebuilder:printcolumn:name="Target Kind",type=string,JSONPath=`.spec.targetRef.kind`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=inherited"
type ClientSettingsPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the desired state of the ClientSettingsPolicy.
	Spec ClientSettingsPolicySpec `json:"spec"`

	// Status is the state of the policy per ancestor (Gateway), as set by Gatewall.
	// +optional
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// ClientSettingsPolicySpec defines the desired state of a ClientSettingsPolicy.
type ClientSettingsPolicySpec struct {
	// Body configures how NGINX reads the body of a client's request. Each
	// unset field is inherited from a policy on the route's Gateway, else it
	// keeps NGINX's default.
	// +optional
	Body *ClientBody `json:"body,omitempty"`

	// KeepAlive configures how long, and for how many requests, NGINX keeps a
	// client's connection open. Each unset field is inherited from a policy on
	// the route's Gateway, else it keeps NGINX's default.
	// +optional
	KeepAlive *ClientKeepAlive `json:"keepAlive,omitempty"`

	// TargetRef is the Gateway, HTTPRoute or GRPCRoute, in the policy's own
	// namespace, that the policy applies to. A route's policy overrides the
	// policy of the Gateways the route is attached to, field by field.
	//
	// +kubebuilder:validation:XValidation:message="TargetRef Kind must be one of: Gateway, HTTPRoute, or GRPCRoute",rule="(self.kind=='Gateway' || self.kind=='HTTPRoute' || self.kind=='GRPCRoute')"
	// +kubebuilder:validation:XValidation:message="TargetRef Group must be gateway.networking.k8s.io.",rule="(self.group=='gateway.networking.k8s.io')"
	TargetRef gatewayv1.LocalPolicyTargetReference `json:"targetRef"`
}

// ClientBody configures the reading of request bodies. Every unset field is
// inherited: from the Gateway's policy for a route policy, else from NGINX's
// defaults.
type ClientBody struct {
	// MaxSize is the largest request body NGINX accepts; a request with a
	// larger body is answered with 413 (Request Entity Too Large). 0 turns the
	// check off. A size of up to 4 digits with an
	// optional k, m or g: 1024, 8k, 10m, 1g. NGINX's default is 1m.
	// NGINX directive: client_max_body_size. A body larger than its buffer
	// is written to the data plane's disk, so a route's policy may not allow
	// more than 1g, nor 0, unless its Gateway's own maxSize is larger; a
	// GRPCRoute's may (gRPC bodies are streamed). A policy over it is
	// refused on that Gateway (Accepted=False, OverBudget).
	//
	// +optional
	MaxSize *ByteSize `json:"maxSize,omitempty"`

	// BufferSize is the size of the buffer NGINX reads a request body into; a
	// body that does not fit is written, whole or in part, to a temporary file.
	// A size of up to 4 digits with an optional k, m or g: 8k, 1m.
	// NGINX's default is two memory pages (8k with the 4k pages of x86-64).
	// NGINX directive: client_body_buffer_size. A worker may hold one for
	// each of its connections: bufferSize times the Gateway's
	// workerConnections may not exceed 128m (at most 128k with the default
	// 1024 connections; 16k always fits), or the policy is refused on that
	// Gateway (Accepted=False, OverBudget).
	//
	// +optional
	BufferSize *ByteSize `json:"bufferSize,omitempty"`

	// Timeout is how long NGINX waits between two reads of a request body (not
	// for the whole body); a client that sends nothing for that long gets 408
	// (Request Time-out). A duration of up to 4 digits with ms, s, m or h, or
	// seconds without a suffix: 500ms, 30s, 5m, 1h. NGINX's default is 60s.
	// NGINX directive: client_body_timeout.
	//
	// +optional
	Timeout *Duration `json:"timeout,omitempty"`
}

// ClientKeepAlive configures keep-alive connections with clients. Every unset
// field is inherited: from the Gateway's policy for a route policy, else from
// NGINX's defaults.
type ClientKeepAlive struct {
	// Requests is how many requests one keep-alive connection may serve before
	// NGINX closes it; closing connections now and then frees the memory each
	// one holds, so a very large number is not advised; 0 closes each
	// connection after its first request.
	// NGINX's default is 1000. NGINX directive: keepalive_requests.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	Requests *int32 `json:"requests,omitempty"`

	// Time is how long one keep-alive connection may serve requests: once it is
	// over, NGINX closes the connection after the request in progress. A
	// duration such as 30m or 1h (ms, s, m, h; no suffix is seconds).
	// NGINX's default is 1h. NGINX directive: keepalive_time.
	//
	// +optional
	Time *Duration `json:"time,omitempty"`

	// Timeout is how long an idle keep-alive connection stays open, and what
	// NGINX tells the client about it. It is inherited as a whole: a route
	// policy that sets it replaces both of the Gateway policy's values.
	// NGINX directive: keepalive_timeout.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="header can only be specified if server is specified",rule="!(has(self.header) && !has(self.server))"
	Timeout *ClientKeepAliveTimeout `json:"timeout,omitempty"`

	// MinTimeout is how long an idle keep-alive connection is kept open even
	// when NGINX would close it to reuse it or because a worker process shuts
	// down gracefully. A duration (ms, s, m, h; no suffix is seconds).
	// NGINX's default is 0. NGINX directive:
	// keepalive_min_timeout, which only NGINX 1.27.4 and later have: Gatewall's
	// data plane does not, so the field is accepted for compatibility but not
	// applied, and the policy's status says so.
	//
	// +optional
	MinTimeout *Duration `json:"minTimeout,omitempty"`
}

// ClientKeepAliveTimeout is the two values of NGINX's keepalive_timeout
// directive. Header may only be set together with Server.
type ClientKeepAliveTimeout struct {
	// Server is how long NGINX keeps an idle keep-alive connection open; 0
	// turns keep-alive connections with clients off. A duration such as 75s
	// (ms, s, m, h; no suffix is seconds). NGINX's default is 75s.
	//
	// +optional
	Server *Duration `json:"server,omitempty"`

	// Header is the value NGINX sends in the "Keep-Alive: timeout=N" response
	// header. A duration in s, m or h, or seconds without a suffix: NGINX
	// refuses milliseconds here. It requires server. NGINX sends no Keep-Alive
	// header by default.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="header must be in whole seconds (s, m or h): NGINX refuses milliseconds there",rule="!self.endsWith('ms')"
	Header *Duration `json:"header,omitempty"`
}

// ClientSettingsPolicyList is a list of ClientSettingsPolicies.
//
// +kubebuilder:object:root=true
type ClientSettingsPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClientSettingsPolicy `json:"items"`
}

// PolicyTargetRefs is the policy's single targetRef, as a one-element list.
func (p *ClientSettingsPolicy) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	return []gatewayv1.LocalPolicyTargetReference{p.Spec.TargetRef}
}

func init() {
	SchemeBuilder.Register(&ClientSettingsPolicy{}, &ClientSettingsPolicyList{})
}
