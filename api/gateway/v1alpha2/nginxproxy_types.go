package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
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

	// RewriteClientIP takes the client's address from the PROXY protocol
	// or X-Forwarded-For of trusted peers (a load balancer or proxy in
	// front of the Gateway), for the backends, the access log, rate
	// limits and address-based balancing. A Gateway's NginxProxy may set
	// it only when its class allows RewriteClientIP
	// (allowGatewayOverrides): who is trusted decides who can choose the
	// address every route sees.
	//
	// +optional
	RewriteClientIP *RewriteClientIP `json:"rewriteClientIP,omitempty"`

	// DisableHTTP2 turns HTTP/2 off on every HTTPS listener: clients speak
	// HTTP/1.1. GRPCRoutes, which need HTTP/2, are then not accepted on the
	// Gateway (their status says why). Defaults to false.
	//
	// +optional
	DisableHTTP2 *bool `json:"disableHTTP2,omitempty"`

	// UseClusterIP makes NGINX send requests to each backend Service's
	// cluster IP and port instead of its endpoints, for every Service with
	// a cluster IP (not headless and ExternalName ones, nor the backends
	// of TLSRoutes, TCPRoutes and UDPRoutes). An UpstreamSettingsPolicy's
	// useClusterIP wins for its Services. Defaults to false.
	//
	// +optional
	UseClusterIP *bool `json:"useClusterIP,omitempty"`

	// DisableSNIHostValidation lets a client's HTTPS connection, opened
	// for one listener's hostname (its TLS server name), carry requests
	// for another listener's hostname on the same port (HTTP/2 connection
	// coalescing with wildcard certificates, GEP-3567): without it they
	// are answered 421 Misdirected Request. Requests are still answered
	// 421 when the two listeners' TLS settings differ (ciphers, protocols,
	// key exchange groups: tls.options), so that no listener's routes are
	// reached over a handshake its settings refuse. Defaults to false.
	//
	// +optional
	DisableSNIHostValidation *bool `json:"disableSNIHostValidation,omitempty"`

	// WorkerProcesses is how many NGINX worker processes run, from 1 to
	// 1024. Unset: one per CPU of the NGINX container's CPU limit (2 by
	// default), or one per CPU of the node without a limit. Each worker
	// holds its own connections (workerConnections), buffers and Lua
	// state: more workers than the CPU limit takes more memory for no more
	// CPU (docs/budgets.md).
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	WorkerProcesses *int32 `json:"workerProcesses,omitempty"`

	// WorkerRlimitNofile is the most files each worker may open
	// (worker_rlimit_nofile), from 1 to 1048576. Unset, and at least: 2 ×
	// workerConnections + 64, a file for every connection and one for its
	// buffered body, which the Gateway's connection budgets count on (a
	// lower value is raised to it, and the status says so). One above the
	// container's hard limit (the container runtime's, often 524288 or
	// 1048576) cannot be set by NGINX, which then logs an alert on each
	// reload and keeps the limit it has.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	WorkerRlimitNofile *int32 `json:"workerRlimitNofile,omitempty"`

	// ServerTokens is what NGINX says of itself in the Server response
	// header and on its error pages: off ("nginx", the default), on
	// ("nginx/1.22.1") or build (the same: Debian's NGINX names no build).
	// Other values (an empty string to send no Server header, a string of
	// your own), which NGINX Plus takes, are accepted and not programmed
	// (off is used; the status says so). At most 255 characters, '"' and
	// '\' escaped with '\', no line breaks.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^([^"\\\x0A\x0D]|\\[^\x0A\x0D])*$`
	ServerTokens *string `json:"serverTokens,omitempty"`

	// Compression compresses responses with gzip for clients that accept
	// it. Compressed HTTPS responses that reflect what a client sent next
	// to a secret (a token in a page) are open to BREACH-style attacks:
	// leave the MIME types of such responses out.
	//
	// +optional
	Compression *Compression `json:"compression,omitempty"`

	// ZoneSize is, in NGINX Gateway Fabric, the shared memory zone of each
	// upstream. Gatewall's upstreams keep their endpoints and balancing
	// state in the data plane's shared Lua dictionaries, sized by Gatewall
	// for the endpoints a Gateway may have, so a zone in each upstream
	// would take shared memory for nothing: it is accepted and not
	// programmed (the status says so). An UpstreamSettingsPolicy's
	// zoneSize still gives its Services' upstreams a zone. A size of up to
	// 4 digits with an optional k, m or g.
	//
	// +optional
	ZoneSize *v1alpha1.ByteSize `json:"zoneSize,omitempty"`

	// DisableBaseHeaders are the forwarding headers Gatewall does not set
	// on proxied requests: X-Forwarded-For, X-Forwarded-Proto,
	// X-Forwarded-Host, X-Forwarded-Port, X-Real-IP, or * for all of them,
	// so that routes' filters set them instead. A client's own header of
	// that name then reaches the backend unless a route's filter sets or
	// removes it: a Gateway's NginxProxy may set this only when its class
	// allows DisableBaseHeaders (allowGatewayOverrides). The loop header
	// (X-Gatewall-Loop) is never disabled.
	//
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=6
	DisableBaseHeaders []BaseHeaderName `json:"disableBaseHeaders,omitempty"`

	// Telemetry configures tracing: W3C trace context propagated to
	// backends, made for requests without one, and logged. Spans are not
	// exported (Debian's NGINX has no OpenTelemetry module): the status
	// says so.
	//
	// +optional
	Telemetry *Telemetry `json:"telemetry,omitempty"`

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
// +kubebuilder:validation:Enum=Images;Service;RewriteClientIP;DisableBaseHeaders;Scheduling;Volumes;HostPorts;Lifecycle;Patches
type GatewayOverrideField string

// The settings a class may let its Gateways' NginxProxies set.
const (
	// OverrideImages: the images and pull policies of every container
	// (kubernetes.deployment.container.image,
	// kubernetes.deployment.wafContainers.*.image). The data plane holds the
	// keys of every certificate its Gateway uses, other namespaces' included.
	OverrideImages GatewayOverrideField = "Images"
	// OverrideService: kubernetes.service (type, externalTrafficPolicy,
	// loadBalancerIP, loadBalancerSourceRanges, loadBalancerClass,
	// nodePorts): who can reach the Gateway, and through what.
	OverrideService GatewayOverrideField = "Service"
	// OverrideRewriteClientIP: rewriteClientIP, which decides whose word
	// about a client's address every route's backends, the access log,
	// rate limits and address-based balancing take.
	OverrideRewriteClientIP GatewayOverrideField = "RewriteClientIP"
	// OverrideDisableBaseHeaders: disableBaseHeaders, which lets clients'
	// own X-Forwarded-* and X-Real-IP headers reach every route's backends.
	OverrideDisableBaseHeaders GatewayOverrideField = "DisableBaseHeaders"
	// OverrideScheduling: the pods' affinity, nodeSelector and
	// tolerations, which choose the nodes that run the keys of every
	// certificate the Gateway serves (beside whatever else runs there).
	OverrideScheduling GatewayOverrideField = "Scheduling"
	// OverrideVolumes: the pods' volumes and the NGINX container's
	// volumeMounts, which can reach the node (hostPath) or other Secrets
	// of the namespace.
	OverrideVolumes GatewayOverrideField = "Volumes"
	// OverrideHostPorts: the NGINX container's hostPorts, ports of the
	// node itself.
	OverrideHostPorts GatewayOverrideField = "HostPorts"
	// OverrideLifecycle: the NGINX container's lifecycle hooks, whose exec
	// actions run commands in the container that holds the keys.
	OverrideLifecycle GatewayOverrideField = "Lifecycle"
	// OverridePatches: the patches of the Deployment, DaemonSet and
	// Service, which can change anything else of them.
	OverridePatches GatewayOverrideField = "Patches"
)

// GatewayOverrides are what a class lets its Gateways choose.
type GatewayOverrides struct {
	// Fields are the settings a Gateway's own NginxProxy may set: Images,
	// Service, RewriteClientIP, DisableBaseHeaders, Scheduling, Volumes,
	// HostPorts, Lifecycle, Patches.
	//
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=9
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
