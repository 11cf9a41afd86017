package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ProxySettingsPolicyAffected is the condition type Gatewall sets on every
// Gateway, HTTPRoute and GRPCRoute affected by a ProxySettingsPolicy.
const ProxySettingsPolicyAffected = "gateway.nginx.org/ProxySettingsPolicyAffected"

// ProxySettingsPolicy is an inherited policy (GEP-713) that configures how NGINX
// buffers responses from upstream applications. A policy on a Gateway is the
// default for every route attached to it; a policy on an HTTPRoute or GRPCRoute
// overrides the Gateway's field by field.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api,scope=Namespaced,shortName=pspolicy;proxysettings
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=inherited"
type ProxySettingsPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the desired state of the ProxySettingsPolicy.
	Spec ProxySettingsPolicySpec `json:"spec"`

	// Status is the state of the policy per ancestor (Gateway), as set by Gatewall.
	// +optional
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// ProxySettingsPolicySpec defines the desired state of a ProxySettingsPolicy.
type ProxySettingsPolicySpec struct {
	// TargetRefs are the Gateways, HTTPRoutes and GRPCRoutes, in the policy's own
	// namespace, that the policy applies to. Each target appears at most once.
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:message="TargetRefs entries must have kind Gateway, HTTPRoute, or GRPCRoute",rule="self.all(t, t.kind == 'Gateway' || t.kind == 'HTTPRoute' || t.kind == 'GRPCRoute')"
	// +kubebuilder:validation:XValidation:message="TargetRefs entries must have group gateway.networking.k8s.io",rule="self.all(t, t.group == 'gateway.networking.k8s.io')"
	// +kubebuilder:validation:XValidation:message="TargetRefs must be unique",rule="self.all(t1, self.exists_one(t2, t1.kind == t2.kind && t1.name == t2.name))"
	TargetRefs []gatewayv1.LocalPolicyTargetReference `json:"targetRefs"`

	// Buffering configures buffering of responses from the proxied server.
	// +optional
	Buffering *ProxyBuffering `json:"buffering,omitempty"`
}

// ProxyBuffering configures NGINX's buffering of upstream responses. Every unset
// field is inherited: from the Gateway's policy for a route policy, else from
// NGINX's defaults. Gatewall checks the effective combination and refuses, in
// status, any combination NGINX would reject.
//
// The busyBuffersSize rules compare sizes as numbers of bytes. The last one
// multiplies buffers.number by buffers.size: it is skipped when buffers.size
// is over its 1024m limit (that limit's own rule rejects the object), so the
// product stays far inside int64 and CEL never overflows.
//
// +kubebuilder:validation:XValidation:message="busyBuffersSize must be greater than or equal to bufferSize",rule="!has(self.busyBuffersSize) || !has(self.bufferSize) || (int(self.busyBuffersSize.find('^[0-9]+')) * (self.busyBuffersSize.matches('[mM]$') ? 1048576 : self.busyBuffersSize.matches('[kK]$') ? 1024 : 1)) >= (int(self.bufferSize.find('^[0-9]+')) * (self.bufferSize.matches('[mM]$') ? 1048576 : self.bufferSize.matches('[kK]$') ? 1024 : 1))"
// +kubebuilder:validation:XValidation:message="busyBuffersSize must be greater than or equal to buffers.size",rule="!has(self.busyBuffersSize) || !has(self.buffers) || (int(self.busyBuffersSize.find('^[0-9]+')) * (self.busyBuffersSize.matches('[mM]$') ? 1048576 : self.busyBuffersSize.matches('[kK]$') ? 1024 : 1)) >= (int(self.buffers.size.find('^[0-9]+')) * (self.buffers.size.matches('[mM]$') ? 1048576 : self.buffers.size.matches('[kK]$') ? 1024 : 1))"
// +kubebuilder:validation:XValidation:message="busyBuffersSize must be less than or equal to the size of all buffers minus one buffer",rule="!has(self.busyBuffersSize) || !has(self.buffers) || (int(self.buffers.size.find('^[0-9]+')) * (self.buffers.size.matches('[mM]$') ? 1048576 : self.buffers.size.matches('[kK]$') ? 1024 : 1)) > 1073741824 || (int(self.busyBuffersSize.find('^[0-9]+')) * (self.busyBuffersSize.matches('[mM]$') ? 1048576 : self.busyBuffersSize.matches('[kK]$') ? 1024 : 1)) <= (self.buffers.number - 1) * (int(self.buffers.size.find('^[0-9]+')) * (self.buffers.size.matches('[mM]$') ? 1048576 : self.buffers.size.matches('[kK]$') ? 1024 : 1))"
type ProxyBuffering struct {
	// Disable turns off buffering of responses from the proxied server: the
	// response is passed to the client synchronously, as it is received. When
	// buffering is on (NGINX's default), NGINX reads the response as fast as
	// possible into buffers. NGINX directive: proxy_buffering.
	//
	// +optional
	Disable *bool `json:"disable,omitempty"`

	// BufferSize is the size of the buffer for the first part of the response,
	// which usually holds the response header. NGINX's default is one memory page
	// (4k here). NGINX directive: proxy_buffer_size (grpc_buffer_size for GRPCRoutes).
	//
	// +optional
	BufferSize *Size `json:"bufferSize,omitempty"`

	// Buffers is the number and size of the buffers for reading a response, per
	// connection. NGINX's default is 8 buffers of one memory page.
	// NGINX directive: proxy_buffers.
	//
	// +optional
	Buffers *ProxyBuffers `json:"buffers,omitempty"`

	// BusyBuffersSize limits the total size of buffers that may be busy sending a
	// response to the client while the response is not yet fully read. It must be
	// at least the larger of bufferSize and buffers.size, and at most the size of
	// all buffers minus one. NGINX's default is twice the larger of bufferSize and
	// buffers.size. NGINX directive: proxy_busy_buffers_size.
	//
	// +optional
	BusyBuffersSize *Size `json:"busyBuffersSize,omitempty"`
}

// ProxyBuffers is the number and size of the buffers for one connection.
//
// +kubebuilder:validation:XValidation:message="buffers.size must be greater than 0",rule="int(self.size.find('^[0-9]+')) > 0"
// +kubebuilder:validation:XValidation:message="buffers.size must be at most 1024m, NGINX's proxy_max_temp_file_size",rule="int(self.size.find('^[0-9]+')) * (self.size.matches('[mM]$') ? 1048576 : self.size.matches('[kK]$') ? 1024 : 1) <= 1073741824"
type ProxyBuffers struct {
	// Number is how many buffers, from 2 to 256.
	//
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=256
	Number int32 `json:"number"`

	// Size is the size of each buffer, from 1 byte to 1024m. NGINX refuses a
	// proxy buffer larger than proxy_max_temp_file_size, 1024m, which Gatewall
	// does not change.
	Size Size `json:"size"`
}

// Size is a size in bytes, or in kilobytes or megabytes with the suffix k or m
// (either case): 1024, 8k, 1m.
//
// +kubebuilder:validation:Pattern=`^\d+[kKmM]?$`
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=12
type Size string

// ProxySettingsPolicyList is a list of ProxySettingsPolicies.
//
// +kubebuilder:object:root=true
type ProxySettingsPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProxySettingsPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ProxySettingsPolicy{}, &ProxySettingsPolicyList{})
}
