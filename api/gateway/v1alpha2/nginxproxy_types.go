package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
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

// DNSResolver is the DNS resolver of the data plane's DNS-named backends.
type DNSResolver struct {
	// Timeout bounds one resolution of a name, every server tried
	// included (each gets an equal share). Defaults to 5s; a value under
	// 100ms is taken as 100ms, over 30s as 30s, and 0 as the default.
	//
	// +optional
	Timeout *v1alpha1.Duration `json:"timeout,omitempty"`

	// CacheTTL replaces the TTL of the answers: a name is resolved again
	// this long after its last answer, whatever TTL the answer had. Unset,
	// the answers' own TTLs decide. Either way, the time between two
	// resolutions of a name is kept between 5s and 1h; a name that stops
	// resolving keeps its last answers 2m past it, then its backend has
	// none (503).
	//
	// +optional
	CacheTTL *v1alpha1.Duration `json:"cacheTTL,omitempty"`

	// DisableIPv6 asks for IPv4 addresses only (no AAAA queries). If not
	// specified, or set to false, IPv6 addresses are used too.
	//
	// +optional
	DisableIPv6 *bool `json:"disableIPv6,omitempty"`

	// Addresses are the DNS servers, asked in order (the next when one
	// does not answer), on port 53. A Hostname is itself resolved by the
	// data-plane pod's own resolver (its /etc/resolv.conf) and resolved
	// again every minute; while it does not resolve, the servers it names
	// are not asked.
	// Example: [{"type": "IPAddress", "value": "8.8.8.8"}, {"type": "Hostname", "value": "dns.google"}]
	//
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Addresses []DNSResolverAddress `json:"addresses"`
}

// DNSResolverAddress is one DNS server of a DNSResolver.
//
// +kubebuilder:validation:XValidation:message="value must be an IP address when type is IPAddress",rule="self.type != 'IPAddress' || isIP(self.value)"
// +kubebuilder:validation:XValidation:message="value must be a lower-case DNS name (RFC 1123) when type is Hostname",rule="self.type != 'Hostname' || self.value.matches('^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?([.][a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$')"
type DNSResolverAddress struct {
	// Type is the kind of value: IPAddress or Hostname.
	Type DNSResolverAddressType `json:"type"`

	// Value is the server's address. When Type is "IPAddress", this must
	// be a valid IPv4 or IPv6 address. When Type is "Hostname", this must
	// be a valid hostname.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Value string `json:"value"`
}

// DNSResolverAddressType is the kind of a DNS server's address.
//
// +kubebuilder:validation:Enum=IPAddress;Hostname
type DNSResolverAddressType string

// The kinds of a DNS server's address.
const (
	// DNSResolverIPAddressType: the value is an IP address.
	DNSResolverIPAddressType DNSResolverAddressType = "IPAddress"
	// DNSResolverHostnameType: the value is a DNS name.
	DNSResolverHostnameType DNSResolverAddressType = "Hostname"
)

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

// Defaults of Upstreams, L4 and WorkerShutdownTimeout.
const (
	DefaultConnectTimeout        = "250ms"
	DefaultMaxTries              = 3
	DefaultMaxRetries            = 3
	DefaultFailTimeout           = "10s"
	DefaultWorkerShutdownTimeout = "60s"
	DefaultWorkerConnections     = 1024
	DefaultTCPIdleTimeout        = "5m"
	DefaultUDPSessionTimeout     = "10s"
)

// L4Listeners bound the connections of TCP and UDP listeners. A TCP
// connection, or a UDP session, holds two of an NGINX worker's
// connections (workerConnections) while it lasts: the client's and the
// backend's. Without bounds, clients of one listener (thousands of UDP
// source ports, or hundreds of idle TCP connections) take every
// connection of the workers, and NGINX answers every HTTP request of the
// Gateway with an error until they end.
type L4Listeners struct {
	// MaxConnections is the most TCP connections, or UDP sessions, one TCP
	// or UDP listener holds at once, counted across the data plane's NGINX
	// workers: a client beyond it is closed (TCP) or its datagrams dropped
	// (UDP) until one ends. Each listener's connections are kept for it in
	// every worker, beside the listening sockets and the connections
	// Gatewall keeps for HTTP clients: 2 × maxConnections of
	// workerConnections each (all may land in one worker). A listener whose
	// connections do not fit is refused (PortUnavailable), in the Gateway
	// API's precedence: the Gateway's own listeners first, then
	// ListenerSets from the oldest. A UDP session lasts udpSessionTimeout,
	// so a listener serves about maxConnections / udpSessionTimeout new
	// clients a second. From 1 to 32767. Unset, the TCP and UDP listeners
	// of the Gateway and its ListenerSets share half of the workers'
	// connections equally ((workerConnections - 64) / 4 connections
	// divided among them, from 16 to 1,024 each: 240 for one listener with
	// workerConnections 1,024, 60 each for four), leaving the other half to
	// HTTP clients and listening sockets.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32767
	MaxConnections *int32 `json:"maxConnections,omitempty"`

	// TCPIdleTimeout closes a TCP listener's connection when neither the
	// client nor the backend sent anything for this long (TCP keep-alive
	// probes do not count), so that clients that went away without closing
	// do not keep the listener's maxConnections. From 1s to 24h; defaults
	// to 5m.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="tcpIdleTimeout must be between 1s and 24h",rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')"
	TCPIdleTimeout *gatewayv1.Duration `json:"tcpIdleTimeout,omitempty"`

	// UDPSessionTimeout ends a UDP listener's session (a client address
	// and port) when no datagram went either way for this long; any number
	// of answers may come back meanwhile. A DNS-like exchange keeps its
	// session, and one of maxConnections, this long after its answer.
	// From 1s to 1h; defaults to 10s.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="udpSessionTimeout must be between 1s and 1h",rule="duration(self) >= duration('1s') && duration(self) <= duration('1h')"
	UDPSessionTimeout *gatewayv1.Duration `json:"udpSessionTimeout,omitempty"`
}

// Upstreams configure NGINX's connections to the endpoints of backends.
// A request goes on to another endpoint when its connection to one fails
// (refused, reset, or not established within connectTimeout), and, for a
// request NGINX may send again (idempotent, or not sent yet), when the
// endpoint fails or times out before answering, within maxTries endpoints.
type Upstreams struct {
	// ConnectTimeout bounds one attempt to connect to an endpoint. Inside a
	// cluster a connection is established in well under a millisecond; an
	// endpoint whose pod is gone may drop packets instead of refusing, and
	// each request sent to it waits this long before trying another. A
	// route's shorter timeout (HTTPRoute timeouts) wins. From 1ms to 60s;
	// defaults to 250ms.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="connectTimeout must be between 1ms and 60s",rule="duration(self) >= duration('1ms') && duration(self) <= duration('60s')"
	ConnectTimeout *gatewayv1.Duration `json:"connectTimeout,omitempty"`

	// MaxTries is the most endpoints one request is sent to, from 1 to 10;
	// defaults to 3.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	MaxTries *int32 `json:"maxTries,omitempty"`

	// MaxRetries bounds the retries a route's rule may ask for (HTTPRoute
	// retry.attempts): a request is sent at most maxRetries + 1 times in
	// all, connection errors included, however many attempts a route asks.
	// Each try is one more request to a backend, maybe to an address
	// outside the cluster that an EndpointSlice names: this is how the
	// Gateway's owner bounds what routes make of one client request. A
	// rule asking more is served with this many retries, and its status
	// says so; 0 serves routes without retries. A Gateway's NginxProxy can
	// lower its class's bound, not raise it. From 0 to 10; defaults to 3.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	MaxRetries *int32 `json:"maxRetries,omitempty"`

	// FailTimeout is how long an endpoint whose connection failed is
	// avoided by later requests (passive health checking), unless every
	// endpoint of its Service failed. Failures of an answer (a slow or
	// failed response) do not count: they say more about one route than
	// about the endpoint. From 1s to 5m; defaults to 10s.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="failTimeout must be between 1s and 5m",rule="duration(self) >= duration('1s') && duration(self) <= duration('5m')"
	FailTimeout *gatewayv1.Duration `json:"failTimeout,omitempty"`
}

// Data-plane ports that listeners cannot use.
const (
	// DefaultMetricsPort is where the data plane serves its metrics unless
	// metrics.port says otherwise.
	DefaultMetricsPort = 9113
	// WAFEnforcerPort is where the WAF enforcer listens for NGINX, in the
	// pod, when WAF is enabled.
	WAFEnforcerPort = 50000
)

// Metrics configures the data plane's Prometheus metrics.
type Metrics struct {
	// Port is the pod's port serving the metrics at /metrics, from 1 to
	// 65535. Defaults to 9113. A Gateway listener cannot use it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// Disable turns the data plane's metrics off: no port, no collection.
	// +optional
	Disable *bool `json:"disable,omitempty"`
}

// MetricsPort is the data plane's metrics port, or 0 when metrics are off.
func (s *NginxProxySpec) MetricsPort() int32 {
	switch {
	case s.Metrics == nil:
		return DefaultMetricsPort
	case s.Metrics.Disable != nil && *s.Metrics.Disable:
		return 0
	case s.Metrics.Port != nil:
		return *s.Metrics.Port
	}
	return DefaultMetricsPort
}

// NginxErrorLevel is the level of NGINX's error log.
//
// +kubebuilder:validation:Enum=debug;info;notice;warn;error;crit;alert;emerg
type NginxErrorLevel string

// AgentLogLevel is the log level of nginx-agent.
//
// +kubebuilder:validation:Enum=debug;info;warn;error
type AgentLogLevel string

// NginxLogging sets the log levels of the data plane.
type NginxLogging struct {
	// ErrorLevel is the level of NGINX's error log (error_log). Defaults to info.
	// +optional
	ErrorLevel *NginxErrorLevel `json:"errorLevel,omitempty"`

	// AgentLevel is the log level of nginx-agent. Defaults to info.
	// +optional
	AgentLevel *AgentLogLevel `json:"agentLevel,omitempty"`
}

// KubernetesSpec configures the Kubernetes objects of a Gateway's data plane.
type KubernetesSpec struct {
	// Deployment configures the data-plane Deployment.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`

	// Service configures the Service in front of the data plane.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`
}

// DeploymentSpec configures the data-plane Deployment.
type DeploymentSpec struct {
	// Replicas is the number of data-plane pods. Defaults to 1.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// Container configures the NGINX container, which also runs nginx-agent.
	// Its resources default to requests of 100m CPU and 256Mi of memory and
	// limits of 2 CPUs and 2560Mi (docs/budgets.md says why); NGINX runs
	// one worker process per CPU of the limit (rounded up), or one per CPU
	// of the node without a CPU limit. Resources set here replace the
	// defaults whole.
	// +optional
	Container *ContainerSpec `json:"container,omitempty"`

	// Endpoints configures the endpoints container, which takes the
	// Gateway's endpoints from Gatewall and hands them to NGINX without a
	// reload. It runs the NGINX container's image.
	// +optional
	Endpoints *EndpointsContainer `json:"endpoints,omitempty"`

	// WAFContainers configures the containers added when waf is enabled.
	// Their resources default to requests only (100m CPU and 256Mi of
	// memory each): F5's containers could not be measured to choose limits.
	// +optional
	WAFContainers *WAFContainers `json:"wafContainers,omitempty"`

	// Pod configures the data-plane pods (the shape of NGINX Gateway
	// Fabric's deployment.pod).
	// +optional
	Pod *PodSpec `json:"pod,omitempty"`
}

// PodSpec configures the data-plane pods.
type PodSpec struct {
	// ImagePullSecrets are Secrets of the Gateway's namespace that hold
	// credentials for the registries of the data-plane images (F5's private
	// registry for App Protect's, say), as in a Pod's imagePullSecrets.
	// They come in addition to the copies of the Secrets the manager's
	// --nginx-docker-secret names. A Gateway's NginxProxy that sets them
	// replaces its GatewayClass's list.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ImagePullSecrets []LocalSecretReference `json:"imagePullSecrets,omitempty"`
}

// LocalSecretReference names a Secret in the same namespace.
type LocalSecretReference struct {
	// Name is the Secret's name.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// EndpointsContainer configures the endpoints container of a data-plane pod.
type EndpointsContainer struct {
	// Resources are the container's compute resource requests and limits.
	// They default to requests of 10m CPU and 32Mi of memory and limits of
	// 500m CPU and 128Mi (docs/budgets.md says why); resources set here
	// replace the defaults whole.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// WAFContainers configures the WAF containers of a data-plane pod.
type WAFContainers struct {
	// Enforcer configures the waf-enforcer container.
	// +optional
	Enforcer *ContainerSpec `json:"enforcer,omitempty"`

	// ConfigManager configures the waf-config-mgr container.
	// +optional
	ConfigManager *ContainerSpec `json:"configManager,omitempty"`
}

// ContainerSpec configures one container.
type ContainerSpec struct {
	// Image is the container image. Unset parts keep Gatewall's defaults.
	// +optional
	Image *Image `json:"image,omitempty"`

	// Resources are the container's compute resource requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// Image is a container image reference.
type Image struct {
	// Repository is the image repository, e.g. ghcr.io/gatewall/dataplane.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9._]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*$`
	Repository *string `json:"repository,omitempty"`

	// Tag is the image tag, e.g. 1.0.0.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	Tag *string `json:"tag,omitempty"`

	// PullPolicy is the image pull policy: Always, IfNotPresent or Never.
	//
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	PullPolicy *corev1.PullPolicy `json:"pullPolicy,omitempty"`
}

// ServiceSpec configures the Service in front of the data plane.
//
// +kubebuilder:validation:XValidation:message="loadBalancerIP can only be set when type is LoadBalancer",rule="!has(self.loadBalancerIP) || !has(self.type) || self.type == 'LoadBalancer'"
// +kubebuilder:validation:XValidation:message="loadBalancerSourceRanges can only be set when type is LoadBalancer",rule="!has(self.loadBalancerSourceRanges) || !has(self.type) || self.type == 'LoadBalancer'"
// +kubebuilder:validation:XValidation:message="externalTrafficPolicy can only be set when type is NodePort or LoadBalancer",rule="!has(self.externalTrafficPolicy) || !has(self.type) || self.type != 'ClusterIP'"
type ServiceSpec struct {
	// Type is the Service type: ClusterIP, NodePort or LoadBalancer (default).
	//
	// +optional
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	Type *corev1.ServiceType `json:"type,omitempty"`

	// ExternalTrafficPolicy is Cluster or Local; Local keeps the client's source
	// address. Only for NodePort and LoadBalancer Services.
	//
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// LoadBalancerIP asks the load balancer for this IP address. Only for
	// LoadBalancer Services.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:message="loadBalancerIP must be an IP address",rule="isIP(self)"
	LoadBalancerIP *string `json:"loadBalancerIP,omitempty"`

	// LoadBalancerSourceRanges are the client CIDRs the load balancer lets in.
	// Only for LoadBalancer Services.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=49
	// +kubebuilder:validation:XValidation:message="loadBalancerSourceRanges must be CIDRs",rule="self.all(r, isCIDR(r))"
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
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
