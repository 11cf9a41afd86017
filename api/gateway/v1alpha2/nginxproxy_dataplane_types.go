package v1alpha2

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

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
