package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// UpstreamSettingsPolicy is a direct policy (GEP-713) that configures the
// connections between NGINX and the endpoints of Services: the upstreams of
// every Gateway whose routes proxy to a target Service. Several policies on
// one Service merge field by field; a field two policies set belongs to the
// older one. The object is the same as NGINX Gateway Fabric's
// UpstreamSettingsPolicy, so its manifests apply unchanged.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gateway-api,scope=Namespaced,shortName=uspolicy;upstreamsettings
// +kubebuilder:printcolumn:name="Targets",type=string,JSONPath=`.spec.targetRefs[*].name`
// +kubebuilder:printcolumn:name="Method",type=string,JSONPath=`.spec.loadBalancingMethod`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:metadata:labels="gateway.networking.k8s.io/policy=direct"
type UpstreamSettingsPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the desired state of the UpstreamSettingsPolicy.
	Spec UpstreamSettingsPolicySpec `json:"spec"`

	// Status is the state of the policy per ancestor: each Gateway whose
	// routes proxy to a target Service, as set by Gatewall.
	// +optional
	Status gatewayv1.PolicyStatus `json:"status,omitempty"`
}

// UpstreamSettingsPolicySpec defines the desired state of an UpstreamSettingsPolicy.
//
// +kubebuilder:validation:XValidation:message="hashMethodKey is required when loadBalancingMethod is 'hash' or 'hash consistent'",rule="!(has(self.loadBalancingMethod) && (self.loadBalancingMethod == 'hash' || self.loadBalancingMethod == 'hash consistent')) || has(self.hashMethodKey)"
type UpstreamSettingsPolicySpec struct {
	// ZoneSize is the size of the shared memory zone of each upstream of a
	// target Service, which lets NGINX's worker processes share the upstream's
	// state (the connection counts of least_conn, for one). A size of up to 4
	// digits with an optional k, m or g, from 32k to 1g. Without it,
	// Gatewall's upstreams have no zone and each worker keeps its own state.
	// NGINX directive: zone. Each upstream of the Service (one per port,
	// and per port spoken to with h2c) gets a zone of this size; the zones
	// of a Gateway's upstreams together may not exceed 64m: the oldest
	// policies keep theirs, and a newer policy whose zones would not fit is
	// refused on that Gateway (Accepted=False, OverBudget).
	//
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:message="zoneSize must be at least 32k: NGINX refuses an upstream zone smaller than 8 memory pages",rule="!self.matches('^[0-9]{1,4}[kmg]?$') || int(self.find('^[0-9]+')) * (self.endsWith('g') ? 1073741824 : self.endsWith('m') ? 1048576 : self.endsWith('k') ? 1024 : 1) >= 32768"
	// +kubebuilder:validation:XValidation:message="zoneSize must be at most 1g: NGINX maps the zone of every upstream of the Service in shared memory",rule="!self.matches('^[0-9]{1,4}[kmg]?$') || int(self.find('^[0-9]+')) * (self.endsWith('g') ? 1073741824 : self.endsWith('m') ? 1048576 : self.endsWith('k') ? 1024 : 1) <= 1073741824"
	ZoneSize *ByteSize `json:"zoneSize,omitempty"`

	// KeepAlive configures the keep-alive connections NGINX keeps open to the
	// Service's endpoints. Each unset field keeps Gatewall's default.
	//
	// +optional
	KeepAlive *UpstreamKeepAlive `json:"keepAlive,omitempty"`

	// LoadBalancingMethod is how NGINX picks an endpoint for each request.
	// Gatewall's default is NGINX's round robin. Open-source NGINX supports
	// round_robin, least_conn, ip_hash, hash, hash consistent, random,
	// random two and random two least_conn; the least_time methods need
	// NGINX Plus: a policy that sets one is accepted for compatibility, its
	// upstreams keep round robin, and its status says so.
	//
	// +optional
	LoadBalancingMethod *LoadBalancingType `json:"loadBalancingMethod,omitempty"`

	// HashMethodKey is the NGINX variable the hash and hash consistent
	// methods hash, e.g. $remote_addr or $request_uri. Required with those
	// methods and ignored with the others. It may be one of the variables
	// $binary_remote_addr, $remote_addr, $remote_user, $server_name, $host,
	// $scheme, $request_method, $uri, $request_uri, $args, $server_port, or
	// $http_<name>, $arg_<name> or $cookie_<name>: NGINX refuses a
	// configuration that names a variable it does not have.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:message="hashMethodKey may only be one of $binary_remote_addr, $remote_addr, $remote_user, $server_name, $host, $scheme, $request_method, $uri, $request_uri, $args, $server_port, $http_<name>, $arg_<name> and $cookie_<name>",rule="self.matches('^[$](binary_remote_addr|remote_addr|remote_user|server_name|host|scheme|request_method|uri|request_uri|args|server_port|(http|arg|cookie)_[a-z_]+)$')"
	HashMethodKey *HashMethodKey `json:"hashMethodKey,omitempty"`

	// UseClusterIP makes NGINX proxy to the Service's cluster IP and port
	// instead of to its endpoints, so that traffic goes through the Service's
	// virtual IP (for a service mesh, for one). It applies only to Services
	// with a cluster IP; headless Services keep their endpoints. A Service
	// without ready endpoints is still answered with 503. Unset: the
	// NginxProxy's useClusterIP, which defaults to false; set, it wins over
	// the NginxProxy's.
	//
	// +optional
	UseClusterIP *bool `json:"useClusterIP,omitempty"`

	// TargetRefs are the Services, in the policy's own namespace, whose
	// upstreams the policy configures: kind Service, group "" (core).
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:message="TargetRefs Kind must be: Service",rule="self.all(t, t.kind=='Service')"
	// +kubebuilder:validation:XValidation:message="TargetRefs Group must be core",rule="self.all(t, t.group=='' || t.group=='core')"
	// +kubebuilder:validation:XValidation:message="TargetRef Name must be unique",rule="self.all(p1, self.exists_one(p2, p1.name == p2.name))"
	TargetRefs []gatewayv1.LocalPolicyTargetReference `json:"targetRefs"`
}

// UpstreamKeepAlive configures keep-alive connections to upstream endpoints.
type UpstreamKeepAlive struct {
	// Connections is how many idle keep-alive connections to a Service port's
	// endpoints each NGINX worker process keeps; past it, the least recently
	// used are closed. 0 keeps none: every request opens a new connection.
	// At most 4096: NGINX sets aside every slot of every upstream when it
	// reads its configuration (about 150 bytes each), and fails to start
	// with the largest numbers. Gatewall's default is 16.
	// NGINX directive: keepalive.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4096
	Connections *int32 `json:"connections,omitempty"`

	// Requests is how many requests one keep-alive connection may carry
	// before NGINX closes it. NGINX's default is 1000.
	// NGINX directive: keepalive_requests (upstream).
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	Requests *int32 `json:"requests,omitempty"`

	// Time is how long one keep-alive connection may carry requests; NGINX
	// closes it after the request in progress once it is over. A duration
	// such as 30m or 1h (ms, s, m, h; no suffix is seconds). NGINX's default
	// is 1h. NGINX directive: keepalive_time (upstream).
	//
	// +optional
	Time *Duration `json:"time,omitempty"`

	// Timeout is how long an idle keep-alive connection stays open. A
	// duration such as 60s (ms, s, m, h; no suffix is seconds). NGINX's
	// default is 60s. NGINX directive: keepalive_timeout (upstream).
	//
	// +optional
	Timeout *Duration `json:"timeout,omitempty"`
}

// LoadBalancingType is a load-balancing method. The least_time methods need
// NGINX Plus.
//
// +kubebuilder:validation:Enum=round_robin;least_conn;ip_hash;hash;hash consistent;random;random two;random two least_conn;random two least_time=header;random two least_time=last_byte;least_time header;least_time last_byte;least_time header inflight;least_time last_byte inflight
type LoadBalancingType string

// HashMethodKey is an NGINX variable: a $ and lower-case letters and
// underscores, e.g. $remote_addr.
//
// +kubebuilder:validation:Pattern=`^\$[a-z_]+$`
type HashMethodKey string

// UpstreamSettingsPolicyList is a list of UpstreamSettingsPolicies.
//
// +kubebuilder:object:root=true
type UpstreamSettingsPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []UpstreamSettingsPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&UpstreamSettingsPolicy{}, &UpstreamSettingsPolicyList{})
}
