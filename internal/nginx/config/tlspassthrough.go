package config

import (
	"sort"
	"strconv"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// TLS listeners and their TLSRoutes. On a port with TLS listeners the
// stream module listens, reads the server name (SNI) of each connection's
// ClientHello without terminating TLS (ssl_preread), and a map sends the
// connection, by that name, to one of:
//
//   - a stream server on a unix socket that passes it to the TLSRoute's
//     backends (one per set of backends, shared by the routes that have
//     it), as it is (a listener in mode Passthrough: the backends terminate
//     TLS), or after terminating TLS with the listener's certificate (mode
//     Terminate: the backends receive the decrypted bytes);
//   - the port's HTTPS servers, which listen on a unix socket behind the
//     stream server when the port also has HTTPS listeners;
//   - a server that closes it, when no listener or TLSRoute claims the name.
//
// A name goes where the most specific listener for it says (an exact
// hostname, else the longest wildcard, else the listener without one), as
// HTTP requests do; on a passthrough listener, to the TLSRoute with that
// hostname (the oldest, when several claim it: graph settles it). The stream server passes connections on with the PROXY
// protocol, so that the HTTPS servers still see the client's address; the
// passing servers strip it (their backends speak TLS, not PROXY).

// streamModule is the module the stream context needs, relative to NGINX's prefix.
const streamModule = "modules/ngx_stream_module.so"

// TLSPort is a port whose TLS connections the stream module passes on by
// server name.
type TLSPort struct {
	Port int32
	// HTTPS says the port's HTTPS servers listen behind it (httpsSocket).
	HTTPS bool
	// Map picks a connection's destination, a unix socket, from its server
	// name ($ssl_preread_server_name).
	Map *Map
}

// TLSPass is a stream server that passes the connections sent to its
// socket to backends: an upstream, or a split's variable.
type TLSPass struct {
	Socket string
	Target string
	// CertPath, when set, is the certificate (and key) file with which the
	// server terminates TLS first (a TLS listener in mode Terminate), with
	// the listener's TLS settings (nil: the stream context's defaults).
	CertPath string
	TLS      *ServerTLS
}

// httpsSocket is the unix socket of a TLS port's HTTPS servers.
func httpsSocket(port int32) string { return sniffSocket(port, "tls") }

// tlsRejectSocket is the socket of the stream server that closes every
// connection: one for a name nothing claims, or a backend that cannot serve.
func tlsRejectSocket() string { return "unix:" + RunDir + "tls-reject.sock" }

// streamBuilder accumulates the stream context's TLS passthrough blocks,
// deduplicated by name.
type streamBuilder struct {
	ports     []*TLSPort
	passes    map[string]*TLSPass
	upstreams map[string]*Upstream
	splits    map[string]*Split
	// l4 and l4Splits are the TCP and UDP listeners' (l4.go).
	l4       []*L4Server
	l4Splits map[string]*Split
}

func newStreamBuilder() streamBuilder {
	return streamBuilder{passes: map[string]*TLSPass{}, upstreams: map[string]*Upstream{}, splits: map[string]*Split{}, l4Splits: map[string]*Split{}}
}

// finish puts the blocks into the configuration, sorted.
func (s *streamBuilder) finish(cfg *Config) {
	cfg.TLSPorts = s.ports // ports are visited in order
	cfg.TLSPasses = sortedValues(s.passes)
	cfg.StreamUpstreams = sortedValues(s.upstreams)
	cfg.StreamSplits = sortedValues(s.splits)
	cfg.L4Servers = s.l4 // ports are visited in order, TCP before UDP
	cfg.L4Splits = sortedValues(s.l4Splits)
}

// sortedValues returns a map's values sorted by key.
func sortedValues[T any](m map[string]T) []T {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// tlsPort builds the map of a port with TLS passthrough listeners; the
// listeners are the port's valid ones, passthrough and HTTPS.
func (b *builder) tlsPort(g *graph.Gateway, port int32, listeners []*graph.Listener) {
	type claim struct {
		route    *graph.Route
		listener *graph.Listener
	}
	claims := map[string][]claim{}
	for _, r := range g.Routes {
		if r.Kind != graph.KindTLSRoute {
			continue
		}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if int32(a.Listener.Source.Port) != port || !a.Listener.Valid {
					continue
				}
				for _, h := range a.Hostnames {
					claims[h] = append(claims[h], claim{r, a.Listener})
				}
			}
		}
	}
	names := map[string]bool{}
	for h := range claims {
		names[h] = true
	}
	https := false
	for _, l := range listeners {
		names[l.Hostname] = true
		https = https || l.Source.Protocol == gatewayv1.HTTPSProtocolType
	}
	dest := func(h string) string {
		best := mostSpecificListener(listeners, h)
		switch {
		case best == nil:
			return tlsRejectSocket()
		case best.Source.Protocol == gatewayv1.HTTPSProtocolType:
			return httpsSocket(port)
		}
		var winner *graph.Route // one at most: the graph settled the claims
		for _, c := range claims[h] {
			if c.listener == best {
				winner = c.route
			}
		}
		if winner == nil {
			return tlsRejectSocket()
		}
		if best.TLS == nil { // mode Passthrough
			return b.tlsPass(winner, nil)
		}
		return b.tlsPass(winner, best)
	}
	m := &Map{Source: "$ssl_preread_server_name", Variable: b.names.of(kindTLSPortVar, strconv.Itoa(int(port))), Hostnames: true}
	hosts := make([]string, 0, len(names))
	for h := range names {
		if h != "" {
			hosts = append(hosts, h)
		}
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		m.Entries = append(m.Entries, MapEntry{Key: h, Value: dest(h)})
	}
	m.Default = dest("")
	b.stream.ports = append(b.stream.ports, &TLSPort{Port: port, HTTPS: https, Map: m})
}

// tlsPass registers the server passing connections to a TLSRoute's
// backends, terminating TLS with the certificate and settings of the
// listener term when set (mode Terminate), and returns its socket, or the
// closing server's when no backend can serve.
func (b *builder) tlsPass(r *graph.Route, term *graph.Listener) string {
	rules := r.ValidRules()
	if len(rules) == 0 || len(rules[0].Backends) == 0 {
		return tlsRejectSocket()
	}
	target := b.tlsTarget(rules[0].Backends)
	if target == tlsRejectSocket() {
		return target
	}
	// The socket of the server passing connections to target, terminating
	// TLS with certPath and the listener's settings when set.
	certPath := ""
	var settings *ServerTLS
	parts := []string{target, certPath}
	if term != nil {
		certPath, settings = b.cert(term.TLS), b.passTLS(term)
		parts = []string{target, certPath}
		if key := term.PassKey(); key != "" {
			parts = append(parts, key)
		}
	}
	sock := b.names.of(kindTLSPassSocket, parts...)
	b.stream.passes[sock] = &TLSPass{Socket: sock, Target: target, CertPath: certPath, TLS: settings}
	return sock
}

// tlsTarget returns where connections to backends go: the upstream of the
// one backend, or a split sharing them by weight, where the share of a
// backend that cannot serve (invalid, or without ready endpoints) is closed.
func (b *builder) tlsTarget(backends []*graph.Backend) string {
	return b.streamTarget(backends, kindStreamUpstream, tlsRejectSocket(), kindTLSSplitVar, b.stream.splits)
}

// streamTarget returns where a stream route's connections go: the upstream
// (named as kind says) of the one backend, or a split (added to splits)
// sharing them by weight, where the share of a backend that cannot serve
// (invalid, or without ready endpoints) goes to closed; closed itself when
// none can.
func (b *builder) streamTarget(backends []*graph.Backend, kind nameKind, closed string, splitKind nameKind, splits map[string]*Split) string {
	dest := func(be *graph.Backend) string {
		if !be.Valid || len(be.Endpoints) == 0 {
			return closed
		}
		name := b.names.of(kind, servicePortParts(be)...)
		if _, ok := b.stream.upstreams[name]; !ok {
			b.stream.upstreams[name] = &Upstream{Name: name, Servers: endpointAddresses(be.Endpoints)}
		}
		return name
	}
	if len(backends) == 1 {
		return dest(backends[0])
	}
	split := &Split{}
	serving := false
	for _, sh := range shares(backends) {
		split.Buckets = append(split.Buckets, SplitBucket{Basis: sh.basis, Upstream: dest(sh.backend)})
		serving = serving || split.Buckets[len(split.Buckets)-1].Upstream != closed
	}
	if !serving {
		// As the graph counts it (passTarget): no server of its own.
		return closed
	}
	split.Variable = b.names.of(splitKind, splitContent(split)...)
	splits[split.Variable] = split
	return split.Variable
}

// writeStreamUpstreams writes the stream context's upstreams (TLS, TCP and
// UDP routes' backends).
func (c *Config) writeStreamUpstreams(w *writer) {
	for _, u := range c.StreamUpstreams {
		w.blank()
		w.open("upstream", u.Name)
		for _, s := range u.Servers {
			// The stream module tries the next endpoint only when a
			// connection fails, and then avoids the endpoint a while:
			// its endpoints change with a reload only (no Lua in stream).
			w.line("server", s, "fail_timeout="+nginxSeconds(c.Main.Upstreams.FailTimeout))
		}
		w.close()
	}
}

// rejects says whether the server closing connections is configured: a
// TLS port, or a TCP listener that may close some, uses it.
func (c *Config) rejects() bool {
	return len(c.TLSPorts) > 0 || c.l4Uses(tlsRejectSocket())
}

// writeReject writes the server that closes every connection.
func (c *Config) writeReject(w *writer) {
	if !c.rejects() {
		return
	}
	w.blank()
	w.open("server")
	w.line(tlsRejectListen().words()...)
	w.line("return", `""`)
	w.close()
}

// writeTLSPassthrough writes the stream context's TLS passthrough blocks.
func (c *Config) writeTLSPassthrough(w *writer) {
	if len(c.TLSPorts) == 0 {
		return
	}
	for _, s := range c.StreamSplits {
		w.blank()
		// Behind the front's PROXY protocol, the client is the PROXY header's.
		writeSplit(w, Quote("$proxy_protocol_addr:$proxy_protocol_port"), s)
	}
	for _, p := range c.TLSPorts {
		w.blank()
		writeMap(w, p.Map)
	}
	c.writeReject(w)
	for _, p := range c.TLSPasses {
		w.blank()
		w.open("server")
		w.line(tlsPassListen(p).words()...)
		if p.CertPath != "" {
			w.line("ssl_certificate", p.CertPath)
			w.line("ssl_certificate_key", p.CertPath)
		}
		for _, dir := range p.TLS.directives() {
			writeDirective(w, dir)
		}
		w.line("proxy_protocol", "off")
		w.line("proxy_pass", p.Target)
		w.close()
	}
	for _, p := range c.TLSPorts {
		w.blank()
		w.open("server")
		for _, l := range c.streamListens(p.Port) {
			w.line(l.words()...)
		}
		w.line("ssl_preread", "on")
		w.line("proxy_pass", p.Map.Variable)
		w.close()
	}
}
