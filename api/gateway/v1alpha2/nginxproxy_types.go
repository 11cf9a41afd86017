package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// NginxProxy holds the data-plane settings of a GatewayClass or a Gateway. A
// GatewayClass refers to one with spec.parametersRef, a Gateway with
// spec.infrastructure.parametersRef. A Gateway's effective settings are the
// GatewayClass's NginxProxy overlaid, field by field, by the Gateway's own.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gatewall,scope=Namespaced,shortName=np
// +kubebuilder:printcolumn:name="WAF",type=string,JSONPath=`.spec.waf`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NginxProxy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec defines the desired data-plane settings.
	Spec NginxProxySpec `json:"spec"`

	// Status says whether Gatewall accepted these settings.
	// +optional
	Status NginxProxyStatus `json:"status,omitempty"`
}

// WAFState turns the F5 WAF on or off for the data plane.
//
// +kubebuilder:validation:Enum=enabled;disabled
type WAFState string

// WAF states.
const (
	// WAFEnabled runs the WAF enforcer and config manager beside NGINX and loads
	// the App Protect module, so WAFGatewayBindingPolicies can take effect.
	WAFEnabled WAFState = "enabled"
	// WAFDisabled runs NGINX without a WAF.
	WAFDisabled WAFState = "disabled"
)

// IPFamily is the IP family NGINX listens on and the Service uses.
//
// +kubebuilder:validation:Enum=dual;ipv4;ipv6
type IPFamily string

// IP families.
const (
	// IPFamilyDual listens on IPv4 and IPv6.
	IPFamilyDual IPFamily = "dual"
	// IPFamilyIPv4 listens on IPv4 only.
	IPFamilyIPv4 IPFamily = "ipv4"
	// IPFamilyIPv6 listens on IPv6 only.
	IPFamilyIPv6 IPFamily = "ipv6"
)

// NginxProxySpec defines the desired data-plane settings.
//
// +kubebuilder:validation:XValidation:message="loadBalancerIP must be an IPv4 address when ipFamily is ipv4",rule="!has(self.ipFamily) || self.ipFamily != 'ipv4' || !has(self.kubernetes) || !has(self.kubernetes.service) || !has(self.kubernetes.service.loadBalancerIP) || !isIP(self.kubernetes.service.loadBalancerIP) || ip(self.kubernetes.service.loadBalancerIP).family() == 4"
// +kubebuilder:validation:XValidation:message="loadBalancerIP must be an IPv6 address when ipFamily is ipv6",rule="!has(self.ipFamily) || self.ipFamily != 'ipv6' || !has(self.kubernetes) || !has(self.kubernetes.service) || !has(self.kubernetes.service.loadBalancerIP) || !isIP(self.kubernetes.service.loadBalancerIP) || ip(self.kubernetes.service.loadBalancerIP).family() == 6"
// +kubebuilder:validation:XValidation:message="metrics.port cannot be 50000 when waf is enabled: the WAF enforcer listens there",rule="!has(self.waf) || self.waf != 'enabled' || !has(self.metrics) || !has(self.metrics.port) || self.metrics.port != 50000"
type NginxProxySpec struct {
	// WAF turns the F5 WAF (NGINX App Protect v5) on or off. When enabled, each
	// data-plane pod runs the waf-enforcer and waf-config-mgr containers beside
	// NGINX, and WAFGatewayBindingPolicies can protect the Gateway's routes.
	// Defaults to disabled. Because the API server fills in the default, a
	// Gateway's NginxProxy always decides WAF for that Gateway, whatever the
	// GatewayClass's NginxProxy says.
	//
	// +kubebuilder:default=disabled
	// +optional
	WAF WAFState `json:"waf,omitempty"`

	// Logging sets the log levels of NGINX and nginx-agent.
	// +optional
	Logging *NginxLogging `json:"logging,omitempty"`

	// IPFamily is the IP family NGINX listens on: dual (default), ipv4 or ipv6.
	// +optional
	IPFamily *IPFamily `json:"ipFamily,omitempty"`

	// WorkerConnections is the most simultaneous connections one NGINX worker
	// process may open (worker_connections), from 1 to 65535. Defaults to 1024.
	// Each listening socket takes one in every worker, each TCP or UDP
	// listener 2 × l4.maxConnections for its clients, and Gatewall keeps 64
	// for the other clients: listeners and routes that do not fit are
	// refused, the newest first, and a value that leaves no socket for any
	// listener refuses the Gateway. Each worker may open twice as many
	// files, and 64 (worker_rlimit_nofile): the container's hard limit must
	// allow as many.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	WorkerConnections *int32 `json:"workerConnections,omitempty"`

	// Kubernetes configures the Deployment and Service Gatewall provisions for
	// each Gateway.
	// +optional
	Kubernetes *KubernetesSpec `json:"kubernetes,omitempty"`

	// Metrics configures the Prometheus metrics of each data-plane pod:
	// NGINX's connections and requests (stub_status, collected by nginx-agent
	// once a minute), labelled with the Gateway's namespace and name, served
	// on the pod's port named metrics. On by default. Changing it rolls the
	// data-plane pods.
	// +optional
	Metrics *Metrics `json:"metrics,omitempty"`

	// Upstreams configure how NGINX reaches the endpoints of the Gateway's
	// backends: how long one connection attempt may take, how many
	// endpoints one request may try, and how long an endpoint whose
	// connection failed is avoided.
	// +optional
	Upstreams *Upstreams `json:"upstreams,omitempty"`

	// L4 bounds what each TCP and UDP listener (TCPRoute, UDPRoute) of the
	// Gateway may hold of its data plane, so that clients of one such
	// listener cannot take the connections every other listener and the
	// pods' readiness probe need: how many connections or sessions it
	// holds at once, and how long an idle one is kept.
	// +optional
	L4 *L4Listeners `json:"l4,omitempty"`

	// WorkerShutdownTimeout bounds how long NGINX keeps serving the
	// connections it had when its configuration changed (a change of
	// routes, listeners or policies reloads NGINX; a change of a Service's
	// endpoints does not): requests in progress finish and long-lived
	// connections (WebSocket, gRPC streams, long downloads) go on until it
	// passes, then are closed. New connections go to the new configuration
	// at once. A longer time keeps long-lived connections longer, at the
	// cost of the memory of the old configuration's workers, kept meanwhile
	// (one set per reload that had such connections open). From 1s to 1h;
	// defaults to 60s.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="workerShutdownTimeout must be between 1s and 1h",rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')"
	WorkerShutdownTimeout *gatewayv1.Duration `json:"workerShutdownTimeout,omitempty"`

	// DNSResolver configures how the data plane resolves the DNS names of
	// backends: ExternalName Services and EndpointSlices of addressType
	// FQDN behind HTTPRoutes and GRPCRoutes. Each data-plane pod's
	// endpoints container resolves them in the background, honouring the
	// answers' TTLs, and hands NGINX the addresses they resolve to, without
	// a reload; a name that does not resolve leaves its backend without
	// endpoints (503). Without it, the pod's own resolver (its
	// /etc/resolv.conf, the cluster's DNS) is asked. NGINX Gateway Fabric's
	// field, field for field.
	//
	// +optional
	DNSResolver *DNSResolver `json:"dnsResolver,omitempty"`

	// AllowGatewayOverrides says what the Gateways of a class may choose for
	// their own data planes, beyond what any Gateway may (docs/security.md).
	// It is read from the GatewayClass's NginxProxy only: a Gateway's
	// NginxProxy that sets it is refused it. Without it, a Gateway's own
	// NginxProxy may not choose the data plane's images and pull policies,
	// nor how its Service is exposed, and only unprefixed
	// spec.infrastructure labels and annotations reach the data plane's
	// objects; what a Gateway sets beyond that is left out, its class's
	// values used, and the Gateway's Accepted condition says so.
	// +optional
	AllowGatewayOverrides *GatewayOverrides `json:"allowGatewayOverrides,omitempty"`
}

// GatewayOverrideField names NginxProxy settings a class may let its
// Gateways set.
//
// +kubebuilder:validation:Enum=Images;Service
type GatewayOverrideField string

// The settings a class may let its Gateways' NginxProxies set.
const (
	// OverrideImages: the images and pull policies of every container
	// (kubernetes.deployment.container.image,
	// kubernetes.deployment.wafContainers.*.image). The data plane holds the
	// keys of every certificate its Gateway uses, other namespaces' included.
	OverrideImages GatewayOverrideField = "Images"
	// OverrideService: kubernetes.service (type, externalTrafficPolicy,
	// loadBalancerIP, loadBalancerSourceRanges): who can reach the Gateway.
	OverrideService GatewayOverrideField = "Service"
)

// GatewayOverrides are what a class lets its Gateways choose.
type GatewayOverrides struct {
	// Fields are the settings a Gateway's own NginxProxy may set: Images,
	// Service.
	//
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	Fields []GatewayOverrideField `json:"fields,omitempty"`

	// InfrastructureKeys are the prefixed label and annotation keys a
	// Gateway's spec.infrastructure may put on its data-plane objects and
	// pods: a key (example.com/team) or every key of a prefix
	// (example.com/). Unprefixed keys (team) always pass: by Kubernetes
	// convention they are the user's own, and no controller acts on them.
	// Prefixed keys are how Kubernetes, cloud load balancers, service
	// meshes and monitoring are told things (a Service annotation can make
	// a load balancer public), so only those listed pass.
	//
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
	InfrastructureKeys []string `json:"infrastructureKeys,omitempty"`
}

// NginxProxyStatus says whether Gatewall accepted the settings.
type NginxProxyStatus struct {
	// Conditions: Accepted (True, or False with reason Invalid and why).
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NginxProxyList is a list of NginxProxies.
//
// +kubebuilder:object:root=true
type NginxProxyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NginxProxy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NginxProxy{}, &NginxProxyList{})
}
