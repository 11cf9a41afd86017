package config

import (
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/internal/validation"
)

// Defaults of main-context settings when the NginxProxy leaves them unset.
const (
	defaultWorkerConnections = v1alpha2.DefaultWorkerConnections
	defaultErrorLevel        = "info"
)

// builder accumulates the http-level blocks that servers and locations share,
// deduplicated by name.
type builder struct {
	cfg       *Config
	maps      map[string]*Map
	splits    map[string]*Split
	upstreams map[string]*Upstream
	sinks     map[int]bool
	// names issues every generated name of the configuration (names.go).
	names *names
	// stream holds the stream context's blocks of TLS passthrough.
	stream streamBuilder
	// routeIncludes are the policy files of each route's locations;
	// serverIncludes and locationIncludes the paths of the files of every
	// server and of every location serving a route.
	routeIncludes                    map[graph.ObjectRef][]File
	serverIncludes, locationIncludes []string
	// filterFiles are the paths of the location files of the
	// SnippetsFilters rendered so far ("" for one without), by filter.
	filterFiles map[graph.ObjectRef]string
	// upstreamSettings are the policies' settings of each Service's upstreams.
	upstreamSettings map[types.NamespacedName]*UpstreamSettings
	// backendClientCert is presented to backends spoken to over TLS.
	backendClientCert *graph.Certificate
	// jwtPolicies are the JWT filters' policies by ID, jwtOrigins the
	// objects they are written from, keySources their remote key sets
	// (jwt.go).
	jwtPolicies jwks.Policies
	jwtOrigins  []string
	keySources  endpoints.KeySources
}

// Build builds the NGINX configuration of a Gateway's graph with the policies'
// include files. The graph must be of a valid Gateway.
func Build(g *graph.Gateway, inc Includes) *Config { return build(g, inc, newNames()) }

// build is Build issuing names from the registry n (tests give one whose
// digests collide).
func build(g *graph.Gateway, inc Includes, n *names) *Config {
	b := &builder{
		cfg:       &Config{Certs: map[string][]byte{}, FileOrigins: map[string][]string{}},
		maps:      map[string]*Map{},
		splits:    map[string]*Split{},
		upstreams: map[string]*Upstream{},
		sinks:     map[int]bool{},
		names:     n,
		stream:    newStreamBuilder(),

		jwtPolicies: jwks.Policies{},
		keySources:  endpoints.KeySources{},

		backendClientCert: g.BackendClientCert,
	}
	b.cfg.Main = mainSettings(g.NginxProxy)
	b.cfg.Main.ReadinessPort = g.ReadinessPort()
	b.cfg.Main.LoopID = LoopID(g)
	b.cfg.Main.L4.MaxConnections = g.L4MaxConnections()
	b.register(inc)
	b.servers(g)
	b.finishJWT()
	for _, s := range b.splits {
		b.cfg.Splits = append(b.cfg.Splits, s)
	}
	sort.Slice(b.cfg.Splits, func(i, j int) bool { return b.cfg.Splits[i].Variable < b.cfg.Splits[j].Variable })
	for _, u := range b.upstreams {
		b.cfg.Upstreams = append(b.cfg.Upstreams, u)
	}
	sort.Slice(b.cfg.Upstreams, func(i, j int) bool { return b.cfg.Upstreams[i].Name < b.cfg.Upstreams[j].Name })
	b.cfg.IDConflict = assignIDs(b.cfg.Upstreams, upstreamID)
	for _, m := range b.maps {
		b.cfg.Maps = append(b.cfg.Maps, m)
	}
	b.cfg.Maps = append(b.cfg.Maps, hashKeyMaps(b.cfg.Upstreams)...)
	sort.Slice(b.cfg.Maps, func(i, j int) bool { return b.cfg.Maps[i].Variable < b.cfg.Maps[j].Variable })
	for code := range b.sinks {
		b.cfg.Sinks = append(b.cfg.Sinks, code)
	}
	sort.Ints(b.cfg.Sinks)
	b.stream.finish(b.cfg)
	return b.cfg
}

func mainSettings(np *v1alpha2.NginxProxySpec) Main {
	m := Main{WorkerConnections: defaultWorkerConnections, WorkerProcesses: (&v1alpha2.NginxProxySpec{}).Workers(), ErrorLevel: defaultErrorLevel, IPv4: true, IPv6: true, StubStatus: true,
		Upstreams: UpstreamDefaults{
			ConnectTimeout: duration(nil, v1alpha2.DefaultConnectTimeout),
			MaxTries:       v1alpha2.DefaultMaxTries,
			FailTimeout:    duration(nil, v1alpha2.DefaultFailTimeout),
		},
		WorkerShutdownTimeout: duration(nil, v1alpha2.DefaultWorkerShutdownTimeout),
		Proxy:                 proxySettings(nil),
		L4: L4Limits{
			TCPIdleTimeout:    duration(nil, v1alpha2.DefaultTCPIdleTimeout),
			UDPSessionTimeout: duration(nil, v1alpha2.DefaultUDPSessionTimeout),
		},
	}
	if np == nil {
		return m
	}
	if l4 := np.L4; l4 != nil {
		m.L4.TCPIdleTimeout = duration(l4.TCPIdleTimeout, v1alpha2.DefaultTCPIdleTimeout)
		m.L4.UDPSessionTimeout = duration(l4.UDPSessionTimeout, v1alpha2.DefaultUDPSessionTimeout)
	}
	if u := np.Upstreams; u != nil {
		m.Upstreams.ConnectTimeout = duration(u.ConnectTimeout, v1alpha2.DefaultConnectTimeout)
		m.Upstreams.FailTimeout = duration(u.FailTimeout, v1alpha2.DefaultFailTimeout)
		if u.MaxTries != nil {
			m.Upstreams.MaxTries = *u.MaxTries
		}
	}
	m.WorkerShutdownTimeout = duration(np.WorkerShutdownTimeout, v1alpha2.DefaultWorkerShutdownTimeout)
	m.Proxy = proxySettings(np)
	m.WorkerProcesses = np.Workers()
	m.StubStatus = np.MetricsPort() != 0
	if np.WorkerConnections != nil {
		m.WorkerConnections = *np.WorkerConnections
	}
	if np.Logging != nil && np.Logging.ErrorLevel != nil {
		m.ErrorLevel = string(*np.Logging.ErrorLevel)
	}
	if np.IPFamily != nil {
		switch *np.IPFamily {
		case v1alpha2.IPFamilyIPv4:
			m.IPv6 = false
		case v1alpha2.IPFamilyIPv6:
			m.IPv4 = false
		}
	}
	return m
}

// duration reads an NginxProxy duration the graph validated, or def when
// it is unset.
func duration(d *gatewayv1.Duration, def string) time.Duration {
	s := def
	if d != nil {
		s = string(*d)
	}
	parsed, err := validation.GatewayDuration(s)
	if err != nil {
		parsed, _ = validation.GatewayDuration(def)
	}
	return parsed
}

// addMap registers a map named by kind k from its content and returns its
// variable: equal content shares a map, and different content never does.
func (b *builder) addMap(k nameKind, m *Map) string {
	m.Variable = b.names.of(k, mapContent(m)...)
	if _, ok := b.maps[m.Variable]; !ok {
		b.maps[m.Variable] = m
	}
	return m.Variable
}

// putMap registers a map under the variable it has: a fixed one of
// Gatewall's own (ownNames), whose content never changes, or one issued
// for what the map stands for (a port's).
func (b *builder) putMap(m *Map) string {
	b.maps[m.Variable] = m
	return m.Variable
}

func mapContent(m *Map) []string {
	parts := []string{m.Source, strconv.FormatBool(m.Hostnames), m.Default}
	for _, e := range m.Entries {
		parts = append(parts, e.Key, e.Value)
	}
	return parts
}

// addSplit registers a split_clients block named by kind k from its
// buckets and returns its variable, as addMap does.
func (b *builder) addSplit(k nameKind, s *Split) string {
	s.Variable = b.names.of(k, splitContent(s)...)
	if _, ok := b.splits[s.Variable]; !ok {
		b.splits[s.Variable] = s
	}
	return s.Variable
}

func splitContent(s *Split) []string {
	var parts []string
	for _, bk := range s.Buckets {
		parts = append(parts, strconv.Itoa(bk.Basis), bk.Upstream)
	}
	return parts
}
