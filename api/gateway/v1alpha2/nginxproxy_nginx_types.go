package v1alpha2

import "github.com/gatewall/gatewall/api/gateway/v1alpha1"

// The NGINX-facing settings NGINX Gateway Fabric's NginxProxy has beside
// the ones Gatewall had (logging levels, ipFamily, workerConnections,
// metrics, dnsResolver), field for field.

// RewriteClientIP says where NGINX takes the client's address from when
// the Gateway is behind a load balancer or proxy: the PROXY protocol
// header or X-Forwarded-For, from trusted addresses only.
//
// +kubebuilder:validation:XValidation:message="if mode is set, trustedAddresses is a required field",rule="!(has(self.mode) && (!has(self.trustedAddresses) || size(self.trustedAddresses) == 0))"
type RewriteClientIP struct {
	// Mode is where the client's address comes from:
	//
	//   - ProxyProtocol: the PROXY protocol header (v1 or v2) that the load
	//     balancer sends before each connection's bytes. Every HTTP, HTTPS,
	//     TLS and TCP listener then requires it (a connection without one
	//     is closed): only use it behind a load balancer that sends it on
	//     every port of the Gateway's Service. UDP listeners take none
	//     (NGINX reads no PROXY protocol over UDP).
	//   - XForwardedFor: the X-Forwarded-For request header (HTTP and HTTPS
	//     listeners; TLS and TCP listeners carry no HTTP header). On a
	//     port whose HTTP servers listen behind Gatewall's stream module
	//     (an HTTP port that also serves GRPCRoutes, or an HTTPS port that
	//     also passes TLS connections to TLSRoutes), NGINX hands them the
	//     connection's peer only: X-Forwarded-For is not read there, and
	//     the Gateway's status says so.
	//
	// Either way the address is taken from a connection whose peer is one
	// of trustedAddresses only: another peer's header is ignored, so
	// clients cannot choose the address backends (X-Forwarded-For,
	// X-Real-IP), the access log, RateLimitPolicy keys and the ip_hash and
	// hash balancing methods see.
	//
	// +optional
	Mode *RewriteClientIPMode `json:"mode,omitempty"`

	// SetIPRecursively, with mode XForwardedFor, takes the address the
	// last trusted proxy was given: the right-most address of
	// X-Forwarded-For that is not one of trustedAddresses (NGINX's
	// real_ip_recursive). Without it, the right-most address, trusted or
	// not. For example, with X-Forwarded-For 11.11.11.11, 22.22.22.22,
	// 55.55.55.1 and trustedAddresses 55.55.55.1/32: 22.22.22.22 with it,
	// 55.55.55.1 without.
	//
	// +optional
	SetIPRecursively *bool `json:"setIPRecursively,omitempty"`

	// TrustedAddresses are the peers whose PROXY protocol header or
	// X-Forwarded-For is believed: the load balancer's or proxies'
	// addresses (NGINX's set_real_ip_from). Required with mode; without a
	// mode they are not used. 0.0.0.0/0 and ::/0 trust every peer, so any
	// client can choose its address: not for production. A Hostname is
	// accepted and not trusted: NGINX would resolve it once, when it loads
	// its configuration, and refuse the whole configuration when it does
	// not resolve; the NginxProxy's status says so. At most 64.
	//
	// +optional
	// +kubebuilder:validation:MaxItems=64
	TrustedAddresses []RewriteClientIPAddress `json:"trustedAddresses,omitempty"`
}

// RewriteClientIPMode is where NGINX takes the client's address from.
//
// +kubebuilder:validation:Enum=ProxyProtocol;XForwardedFor
type RewriteClientIPMode string

// The modes of RewriteClientIP.
const (
	RewriteClientIPModeProxyProtocol RewriteClientIPMode = "ProxyProtocol"
	RewriteClientIPModeXForwardedFor RewriteClientIPMode = "XForwardedFor"
)

// RewriteClientIPAddress is one trusted address of RewriteClientIP.
//
// +kubebuilder:validation:XValidation:message="value must be a CIDR when type is CIDR",rule="self.type != 'CIDR' || isCIDR(self.value)"
// +kubebuilder:validation:XValidation:message="value must be an IP address when type is IPAddress",rule="self.type != 'IPAddress' || isIP(self.value)"
// +kubebuilder:validation:XValidation:message="value must be a lower-case DNS name (RFC 1123) when type is Hostname",rule="self.type != 'Hostname' || self.value.matches('^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?([.][a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$')"
type RewriteClientIPAddress struct {
	// Type is the kind of value: CIDR, IPAddress or Hostname.
	Type RewriteClientIPAddressType `json:"type"`

	// Value is the address: a CIDR (10.0.0.0/8, 2001:db8::/32), an IP
	// address, or a host name.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Value string `json:"value"`
}

// RewriteClientIPAddressType is the kind of a trusted address.
//
// +kubebuilder:validation:Enum=CIDR;IPAddress;Hostname
type RewriteClientIPAddressType string

// The kinds of trusted addresses.
const (
	RewriteClientIPCIDRAddressType     RewriteClientIPAddressType = "CIDR"
	RewriteClientIPIPAddressType       RewriteClientIPAddressType = "IPAddress"
	RewriteClientIPHostnameAddressType RewriteClientIPAddressType = "Hostname"
)

// BaseHeaderName names a forwarding header Gatewall sets on every proxied
// request, or "*" for all of them.
//
// +kubebuilder:validation:Enum=*;X-Forwarded-For;X-Forwarded-Proto;X-Forwarded-Host;X-Forwarded-Port;X-Real-IP
type BaseHeaderName string

// The base headers.
const (
	AllBaseHeaders        BaseHeaderName = "*"
	HeaderXForwardedFor   BaseHeaderName = "X-Forwarded-For"
	HeaderXForwardedProto BaseHeaderName = "X-Forwarded-Proto"
	HeaderXForwardedHost  BaseHeaderName = "X-Forwarded-Host"
	HeaderXForwardedPort  BaseHeaderName = "X-Forwarded-Port"
	HeaderXRealIP         BaseHeaderName = "X-Real-IP"
)

// Compression configures gzip compression of responses (NGINX's gzip
// module) for clients that accept it.
//
// +kubebuilder:validation:XValidation:message="type 'gzip' requires spec.compression.gzip to be set",rule="!(self.type == 'gzip' && !has(self.gzip))"
type Compression struct {
	// Type is the compression algorithm: gzip.
	Type CompressionType `json:"type"`

	// Gzip configures what the gzip module compresses.
	//
	// +optional
	Gzip *GzipSettings `json:"gzip,omitempty"`

	// Buffers are the number and size of the buffers compressing one
	// response: at most 2m in all (number × size), since a slow client
	// keeps them while it reads. NGINX's default: 32 4k.
	// NGINX directive: gzip_buffers.
	//
	// +optional
	Buffers *CompressionBuffers `json:"buffers,omitempty"`

	// Level is the compression level, from 1 (fastest) to 9 (smallest);
	// NGINX's default is 1. NGINX directive: gzip_comp_level.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
	Level *int32 `json:"level,omitempty"`

	// MinLength is the shortest response, by its Content-Length, that is
	// compressed; NGINX's default is 20. NGINX directive: gzip_min_length.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinLength *int32 `json:"minLength,omitempty"`

	// MimeTypes are the MIME types compressed besides text/html (always
	// compressed), as type/subtype of at most 46 characters (no wildcards,
	// which NGINX does not read): ["application/json", "text/css"]. NGINX
	// keeps them in a table of fixed size: a list it could not build one
	// for without a warning (types whose NGINX hashes are equal) is
	// refused by Gatewall. NGINX directive: gzip_types.
	//
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=46
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9!#$%&+.^_|~-]+/[A-Za-z0-9!#$%&+.^_|~-]+$`
	MimeTypes []string `json:"mimeTypes,omitempty"`
}

// CompressionType is a compression algorithm.
//
// +kubebuilder:validation:Enum=gzip
type CompressionType string

// GzipCompressionType is gzip.
const GzipCompressionType CompressionType = "gzip"

// CompressionBuffers are the buffers compressing one response.
//
// +kubebuilder:validation:XValidation:message="size must be greater than 0",rule="int(self.size.find('^[0-9]+')) > 0"
// +kubebuilder:validation:XValidation:message="number × size must be at most 2m",rule="int(self.size.find('^[0-9]+')) * (self.size.endsWith('g') ? 1073741824 : self.size.endsWith('m') ? 1048576 : self.size.endsWith('k') ? 1024 : 1) * self.number <= 2097152"
type CompressionBuffers struct {
	// Size is the size of each buffer: 4k, 8k.
	Size v1alpha1.ByteSize `json:"size"`

	// Number is how many buffers, from 1 to 256.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Number int32 `json:"number"`
}

// GzipSettings configure the gzip module.
type GzipSettings struct {
	// Vary adds "Vary: Accept-Encoding" to responses that may be
	// compressed, so that caches keep both forms. NGINX directive:
	// gzip_vary.
	//
	// +optional
	Vary *bool `json:"vary,omitempty"`

	// HTTPVersion is the lowest HTTP version of a request whose response
	// is compressed: 1.0 or 1.1 (NGINX's default). NGINX directive:
	// gzip_http_version.
	//
	// +optional
	HTTPVersion *GzipHTTPVersion `json:"httpVersion,omitempty"`

	// Disable are regular expressions of User-Agent headers whose
	// requests get uncompressed responses (case-insensitive), or "msie6".
	// Each is a regular expression as route matches take them (printable
	// ASCII, what RE2 and NGINX's PCRE2 read alike, with bounded
	// backtracking), of at most 256 characters. NGINX directive:
	// gzip_disable.
	//
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	Disable []string `json:"disable,omitempty"`

	// Proxied says which responses to requests that came through a proxy
	// (with a Via header) are compressed: off (none: NGINX's default),
	// expired, no-cache, no-store, private, no_last_modified, no_etag,
	// auth, any. NGINX directive: gzip_proxied.
	//
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=9
	Proxied []GzipProxiedType `json:"proxied,omitempty"`
}

// GzipHTTPVersion is an HTTP version for gzip_http_version.
//
// +kubebuilder:validation:Enum="1.0";"1.1"
type GzipHTTPVersion string

// GzipProxiedType is a value of gzip_proxied.
//
// +kubebuilder:validation:Enum=off;expired;no-cache;no-store;private;no_last_modified;no_etag;auth;any
type GzipProxiedType string

// Telemetry configures tracing (OpenTelemetry). NGINX 1.22 from Debian
// has no OpenTelemetry module, so spans are not exported: the settings
// are accepted and reported as not programmed in the NginxProxy's and the
// Gateway's status. What the data plane does with tracing on (unless
// disabledFeatures lists DisableTracing): a request's W3C traceparent
// header is passed to the backend unchanged, and one is made for a
// request without a valid one (trace-id NGINX's $request_id: 16 random
// bytes; parent-id the first 8 of them; sampled), so the backend's spans
// of one request share a trace; and the access log carries the trace and
// span IDs ($otel_trace_id, $otel_span_id).
type Telemetry struct {
	// DisabledFeatures turns features off: DisableTracing (no traceparent
	// is made, none in the access log).
	//
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=1
	DisabledFeatures []DisableTelemetryFeature `json:"disabledFeatures,omitempty"`

	// Exporter is where spans would be exported (OTLP over gRPC).
	// Accepted; not programmed.
	//
	// +optional
	Exporter *TelemetryExporter `json:"exporter,omitempty"`

	// ServiceName is the service.name of the spans, after
	// "ngf:<namespace>:<gateway>:" (NGINX Gateway Fabric's form).
	// Accepted; not programmed.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=127
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-]+$`
	ServiceName *string `json:"serviceName,omitempty"`

	// SpanAttributes are attributes added to each span. Accepted; not
	// programmed.
	//
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=64
	SpanAttributes []v1alpha1.SpanAttribute `json:"spanAttributes,omitempty"`
}

// DisableTelemetryFeature is a telemetry feature that can be turned off.
//
// +kubebuilder:validation:Enum=DisableTracing
type DisableTelemetryFeature string

// DisableTracing turns tracing off.
const DisableTracing DisableTelemetryFeature = "DisableTracing"

// TelemetryExporter is where spans are exported.
type TelemetryExporter struct {
	// Interval is the longest time between two exports.
	//
	// +optional
	Interval *v1alpha1.Duration `json:"interval,omitempty"`

	// BatchSize is the most spans one batch of a worker holds.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	BatchSize *int32 `json:"batchSize,omitempty"`

	// BatchCount is the most batches of a worker waiting to be sent;
	// spans beyond them are dropped.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	BatchCount *int32 `json:"batchCount,omitempty"`

	// Endpoint is the OTLP/gRPC endpoint: a host name with an optional
	// http:// scheme and port (otel-collector.monitoring.svc:4317).
	//
	// +optional
	// +kubebuilder:validation:MaxLength=266
	// +kubebuilder:validation:Pattern=`^(http://)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$`
	Endpoint *string `json:"endpoint,omitempty"`
}

// TracingOn says whether the data plane propagates and logs trace
// context: telemetry is set and DisableTracing is not among its disabled
// features.
func (s *NginxProxySpec) TracingOn() bool {
	if s == nil || s.Telemetry == nil {
		return false
	}
	for _, f := range s.Telemetry.DisabledFeatures {
		if f == DisableTracing {
			return false
		}
	}
	return true
}
