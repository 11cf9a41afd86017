package config

import (
	"time"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/datafile"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
)

// File is one file of a data plane's configuration (the renderer's name
// for datafile.File).
type File = datafile.File

// Paths of the files Gatewall writes on the data plane.
const (
	MainConfPath      = "/etc/nginx/nginx.conf"
	HTTPConfPath      = "/etc/nginx/conf.d/http.conf"
	UpstreamsConfPath = "/etc/nginx/conf.d/upstreams.conf"
	ServersConfPath   = "/etc/nginx/conf.d/servers.conf"
	// ServerShardsDir holds the server blocks of a large configuration,
	// split into ServerShards files that servers.conf includes.
	ServerShardsDir = "/etc/nginx/conf.d/servers/"
	SecretsDir      = "/etc/nginx/secrets/"
	IncludesDir     = "/etc/nginx/includes/"
	RunDir          = "/var/run/nginx/"
	CacheDir        = "/var/cache/nginx/"
	// StatusSocket is where NGINX serves stub_status to nginx-agent, which
	// finds it in the configuration and turns it into the pod's metrics.
	StatusSocket = "unix:" + RunDir + "nginx-status.sock"
	// StatusPath is the location of stub_status on StatusSocket.
	StatusPath = "/stub_status"
	// ReadinessPath answers 204 on Main.ReadinessPort, for the kubelet.
	ReadinessPath = "/readyz"
	// AgentErrorLog is the error log nginx-agent watches after reloads; the
	// data-plane entrypoint (build/dataplane/entrypoint.sh) bounds its size.
	AgentErrorLog = "/var/log/nginx/error.log"
	// InternalPrefix starts the paths of internal locations; requests from
	// clients never reach them (they are marked internal). The '|' is a
	// character Exact and PathPrefix matches refuse (validation.MatchPath),
	// so no route's location can have the path of an internal one.
	InternalPrefix = "/_gatewall|/"
)

// Config is the NGINX configuration of one Gateway.
type Config struct {
	Main      Main
	Servers   []*Server
	Upstreams []*Upstream
	Maps      []*Map
	Splits    []*Split
	// Sinks are the status codes (500, 503) some split needs an upstream for.
	Sinks []int
	// Certs are the TLS files, keyed by path.
	Certs map[string][]byte
	// FileOrigins are, by path, the objects some files (Certs, and
	// include files written from users' objects) are written from
	// ("Secret ns/name"), sorted: NGINX's errors name files, users need
	// the objects.
	FileOrigins map[string][]string
	// Includes are policy files at http, server or location level.
	Includes []File
	// HTTPIncludes are include paths at http level.
	HTTPIncludes []string
	// Sniffed are the cleartext ports serving both HTTP/1.x and gRPC (h2c),
	// sorted: the stream module tells the protocols apart (sniff.go).
	Sniffed []int32
	// TLSPorts are the ports where the stream module passes TLS
	// connections on by the server name they ask for (tlspassthrough.go),
	// sorted by port.
	TLSPorts []*TLSPort
	// TLSPasses are the stream servers passing connections to TLSRoute
	// backends, sorted by socket.
	TLSPasses []*TLSPass
	// StreamUpstreams and StreamSplits are the stream context's upstreams
	// and split_clients blocks, sorted by name and variable.
	StreamUpstreams []*Upstream
	StreamSplits    []*Split
	// L4Servers are the stream servers of TCP and UDP listeners, sorted
	// by port, TCP first; L4Splits their splits, sorted by variable (l4.go).
	L4Servers []*L4Server
	L4Splits  []*Split
	// IDConflict says why the dynamic upstreams' IDs cannot be given
	// (two upstreams' identities share one: assignIDs); "" when they were.
	// Such a configuration must not reach a data plane.
	IDConflict string
	// keySources are the remote key sets of JWT filters (KeySources).
	keySources endpoints.KeySources
}

// Main holds the main-context settings.
type Main struct {
	WorkerConnections int32
	// WorkerProcesses is NGINX's worker_processes: one per CPU of the NGINX
	// container's limit, so that its memory stays within the container's
	// (0: auto, one per CPU of the node).
	WorkerProcesses int32
	ErrorLevel      string
	IPv4, IPv6      bool
	Modules         []string
	// StubStatus serves NGINX's connection and request counts on
	// StatusSocket, for the data plane's metrics.
	StubStatus bool
	// ReadinessPort, when not 0, is where NGINX answers the pod's
	// readiness probe (ReadinessPath): only a configuration Gatewall
	// pushed listens there (graph.Gateway.ReadinessPort), and only once
	// its endpoints arrived.
	ReadinessPort int32
	// Upstreams are the Gateway's settings of connections to endpoints.
	Upstreams UpstreamDefaults
	// WorkerShutdownTimeout bounds how long the workers of a replaced
	// configuration keep their connections (worker_shutdown_timeout).
	WorkerShutdownTimeout time.Duration
	// LoopID is the Gateway's ID in the loop header (loop.go).
	LoopID string
	// L4 bounds the TCP and UDP listeners' connections (l4.go).
	L4 L4Limits
	// Proxy are the NginxProxy's other NGINX-facing settings (nginxproxy.go).
	Proxy ProxySettings
}

// L4Limits are the NginxProxy's l4 settings, defaults filled in.
type L4Limits struct {
	MaxConnections                    int32
	TCPIdleTimeout, UDPSessionTimeout time.Duration
}

// UpstreamDefaults are the NginxProxy's upstreams settings, defaults filled in.
type UpstreamDefaults struct {
	ConnectTimeout time.Duration
	MaxTries       int32
	FailTimeout    time.Duration
}

// RlimitNofile is the most files each worker may open
// (worker_rlimit_nofile): what its connections need
// (v1alpha2.FilesForConnections). Without it a worker has the container's
// limit, which may be under its connections (NGINX then warns that they
// "exceed open file resource limit", and fails connections once the files
// run out). NGINX sets it as both the soft and the hard limit; run as a
// user without CAP_SYS_RESOURCE (the data plane's), it cannot raise the
// container's hard limit, so that must be at least 2 × 65,535 + 64 for
// the largest workerConnections (container runtimes give 524,288 or more).
// The NginxProxy's workerRlimitNofile raises it, never lowers it: the
// Gateway's connection budgets (graph/sockets.go) count on a file for
// every connection (graph.NotProgrammed says so of a lower one).
func (m Main) RlimitNofile() int {
	return int(max(m.Proxy.RlimitNofile, v1alpha2.FilesForConnections(m.WorkerConnections)))
}

// Server is one server block.
type Server struct {
	Port    int32
	Default bool
	// Name is the server_name; "" for a default server.
	Name            string
	SSL             bool
	HTTP2           bool
	CertPath        string
	RejectHandshake bool
	// ClientCerts, when set, asks clients for a certificate: verified
	// against ClientCAPath (clients without a valid one are disconnected),
	// or, with ClientCertsOptional, accepted whatever they present.
	ClientCerts         bool
	ClientCertsOptional bool
	ClientCAPath        string
	// TLS are the server's TLS settings beyond its certificate (nil:
	// http.conf's and NGINX's defaults).
	TLS *ServerTLS
	// Directives are server-level directives, before the includes and locations.
	Directives []Directive
	Locations  []*Location
	Includes   []string
}

// ServerTLS are the TLS settings of a server that terminates TLS, from
// its listener's tls.options (values checked by package validation);
// unset fields keep the context's defaults.
type ServerTLS struct {
	Protocols []string
	// Ciphers is an OpenSSL cipher string.
	Ciphers string
	// PreferServerCiphers is "on", "off" or "".
	PreferServerCiphers string
	// ECDHCurve is a list of groups joined by ':'.
	ECDHCurve string
	// SessionCache is "off", or a shared cache: its zone and size.
	SessionCache     string
	SessionCacheZone string
	SessionTimeout   string
}

// directives are the settings' directives, user values quoted.
func (t *ServerTLS) directives() []Directive {
	var out []Directive
	if t == nil {
		return nil
	}
	if len(t.Protocols) > 0 {
		out = append(out, D("ssl_protocols", t.Protocols...))
	}
	if t.Ciphers != "" {
		out = append(out, D("ssl_ciphers", Quote(t.Ciphers)))
	}
	if t.PreferServerCiphers != "" {
		out = append(out, D("ssl_prefer_server_ciphers", t.PreferServerCiphers))
	}
	if t.ECDHCurve != "" {
		out = append(out, D("ssl_ecdh_curve", Quote(t.ECDHCurve)))
	}
	switch {
	case t.SessionCache == "off":
		out = append(out, D("ssl_session_cache", "off"))
	case t.SessionCache != "":
		out = append(out, D("ssl_session_cache", Quote("shared:"+t.SessionCacheZone+":"+t.SessionCache)))
	}
	if t.SessionTimeout != "" {
		out = append(out, D("ssl_session_timeout", Quote(t.SessionTimeout)))
	}
	return out
}

// Location is one location block.
type Location struct {
	// Modifier is "=", "~" or "" (prefix).
	Modifier   string
	Path       string
	Internal   bool
	Directives []Directive
	Includes   []string
}

// Directive is one directive; args are already quoted where they hold user
// data. A directive with a Block is a block ("if (...) { ... }"). The
// renderer and policies (package policy) build the directives they write
// as Directives, rendered as "name arg1 arg2;".
type Directive struct {
	Name  string
	Args  []string
	Block []Directive
}

// D is a directive without a block.
func D(name string, args ...string) Directive { return Directive{Name: name, Args: args} }

// Upstream is one upstream block: the endpoints of a Service port.
type Upstream struct {
	Name string
	// ID identifies a dynamic upstream to the Lua balancer and in the
	// endpoints sent to the data plane (upstreamID, from identity); "" for
	// a static one.
	ID string
	// identity is what the upstream is (names.go's identity of its name's
	// parts): the same in every configuration, whatever name it gets.
	identity string
	// Servers are a static upstream's servers (the stream context's).
	Servers []string
	// Endpoints are a dynamic upstream's endpoints (host:port), which do not
	// appear in the configuration: they reach the data plane apart from it
	// (Config.Endpoints).
	Endpoints []string
	// Names are a dynamic upstream's DNS names with their port, which
	// the data plane resolves (graph.Backend.Names).
	Names []string
	// Fallback is the one server a dynamic upstream declares, which NGINX
	// uses when the upstream has no endpoint: a sink answering 503.
	Fallback string
	// Unsent says the data plane is sent nothing of a dynamic upstream
	// (the Gateway's endpoint budget has no room for it: graph.Backend.Unsent).
	Unsent bool
	// Settings are what policies set on the Service's upstreams (nil: none).
	Settings *UpstreamSettings
	// Key is the Service port (and protocol) a dynamic upstream is of.
	Key graph.UpstreamKey
	// clusterIP is the Service's cluster IP and port when a dynamic
	// upstream goes to it ("": to the endpoints).
	clusterIP string
}

// DefaultUpstreamKeepalive is how many idle connections to a Service port's
// endpoints each worker keeps when no policy says otherwise.
const DefaultUpstreamKeepalive = 16

// UpstreamSettings configure the upstreams of one Service (every port of
// it). Unset fields keep NGINX's defaults (Gatewall's for Keepalive).
type UpstreamSettings struct {
	// ZoneSize gives each upstream a shared memory zone of that size, in
	// NGINX's syntax without the g suffix (which zone does not take); "": none.
	ZoneSize string
	// Method is the load-balancing directive's words, e.g. ["least_conn"]
	// or ["hash", "$remote_addr", "consistent"]; nil is round robin.
	Method []string
	// Keepalive is the idle connections kept per worker; nil is
	// DefaultUpstreamKeepalive, 0 keeps none.
	Keepalive *int32
	// KeepaliveRequests, KeepaliveTime and KeepaliveTimeout are the
	// keepalive_requests, keepalive_time and keepalive_timeout values.
	KeepaliveRequests               *int32
	KeepaliveTime, KeepaliveTimeout string
	// UseClusterIP, when set, says whether the Service's cluster IP and
	// port are the only server, for Services that have one; nil leaves it
	// to the NginxProxy's useClusterIP.
	UseClusterIP *bool
}

// Map is one map block. Entries are in order; regex entries are tried in
// that order, so order is precedence.
type Map struct {
	Source   string
	Variable string
	// Hostnames makes the keys host names, "*."-prefixed ones matching
	// subdomains; exact names win over wildcards, longer wildcards over shorter.
	Hostnames bool
	Entries   []MapEntry
	Default   string
}

// MapEntry is one key and value of a map.
type MapEntry struct {
	Key   string
	Value string
}

// Split is a split_clients block for weighted backends.
type Split struct {
	Variable string
	Buckets  []SplitBucket
}

// SplitBucket is a share of requests, in hundredths of a percent, and its upstream.
type SplitBucket struct {
	Basis    int // hundredths of a percent; the last bucket takes the rest
	Upstream string
}
