package config

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// served is a route served in a server, through one listener.
type served struct {
	route    *graph.Route
	listener *graph.Listener
}

// servers builds the server blocks of every port with a valid listener. Each
// hostname a route attached with becomes a server; a request's hostname picks
// the most specific listener (listener isolation), so each server holds only
// the routes attached to the listener that best matches its name.
func (b *builder) servers(g *graph.Gateway) {
	byPort := map[int32][]*graph.Listener{}
	for _, l := range g.ValidListeners() {
		p := int32(l.Source.Port)
		byPort[p] = append(byPort[p], l)
	}
	ports := make([]int32, 0, len(byPort))
	for p := range byPort {
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	for _, port := range ports {
		var http, tcp []*graph.Listener // tcp: a port's TCP-based listeners
		var l4 []*graph.Listener        // TCP first, then UDP
		passthrough := false
		for _, l := range byPort[port] {
			switch l.Source.Protocol {
			case gatewayv1.TCPProtocolType:
				l4 = append([]*graph.Listener{l}, l4...)
				continue
			case gatewayv1.UDPProtocolType:
				l4 = append(l4, l)
				continue
			case gatewayv1.TLSProtocolType:
				passthrough = true
			default:
				http = append(http, l)
			}
			tcp = append(tcp, l)
		}
		for _, l := range l4 {
			b.l4Port(g, port, l)
		}
		if passthrough {
			b.tlsPort(g, port, tcp)
		}
		if len(http) > 0 {
			b.portServers(g, port, http)
		}
	}
}

func (b *builder) portServers(g *graph.Gateway, port int32, listeners []*graph.Listener) {
	ssl := listeners[0].Source.Protocol == gatewayv1.HTTPSProtocolType
	byHost := map[string][]served{}
	for _, r := range g.Routes {
		if graph.PassesConnections(r.Kind) {
			continue // passed on by the stream module (tlsPort, l4Port)
		}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if int32(a.Listener.Source.Port) != port || !a.Listener.Valid {
					continue // attached to a listener that is not configured (unresolved references)
				}
				for _, h := range a.Hostnames {
					byHost[h] = append(byHost[h], served{route: r, listener: a.Listener})
				}
			}
		}
	}
	hosts := make([]string, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)

	if !ssl && g.SniffsPort(port) {
		// Ports are visited in order, so Sniffed stays sorted.
		b.cfg.Sniffed = append(b.cfg.Sniffed, port)
	}
	// The default server answers requests no server name matches: it holds
	// routes for any hostname (""), else answers 404 (or refuses TLS).
	h2 := ssl && !b.cfg.Main.Proxy.NoHTTP2
	def := &Server{Port: port, Default: true, SSL: ssl, HTTP2: h2, Includes: b.serverIncludes}
	certs, optional, ca := b.clientValidation(listeners)
	withClientValidation := func(s *Server) *Server {
		s.ClientCerts, s.ClientCertsOptional, s.ClientCAPath = certs, optional, ca
		return s
	}
	withClientValidation(def)
	owner := mostSpecificListener(listeners, "")
	if ssl {
		if owner != nil && owner.TLS != nil {
			def.CertPath = b.cert(owner.TLS)
		} else {
			def.RejectHandshake = true
		}
		def.TLS = b.serverTLS(port, owner, g.Handshake(gatewayv1.PortNumber(port)))
	}
	b.cfg.Servers = append(b.cfg.Servers, def)
	misdirected := func(*graph.Listener) []Directive { return nil }
	if ssl {
		checks := b.misdirectedCheck(port, listeners)
		misdirected = func(l *graph.Listener) []Directive { return append(checks(l), b.handshakeChecks(l)...) }
		def.Directives = misdirected(owner)
	}
	for _, h := range hosts {
		best := mostSpecificListener(listeners, h)
		var routes []*graph.Route
		seen := map[*graph.Route]bool{}
		for _, s := range byHost[h] {
			if s.listener == best && !seen[s.route] {
				seen[s.route] = true
				routes = append(routes, s.route)
			}
		}
		srv := def
		if h != "" {
			srv = withClientValidation(&Server{Port: port, Name: h, SSL: ssl, HTTP2: h2, Directives: misdirected(best), Includes: b.serverIncludes})
			if ssl && best.TLS != nil {
				srv.CertPath = b.cert(best.TLS)
			}
			if ssl {
				srv.TLS = b.serverTLS(port, best, nil)
			}
			b.cfg.Servers = append(b.cfg.Servers, srv)
		}
		b.locations(srv, routes)
	}
	if ssl {
		b.cipherServers(port, listeners, hosts, func(l *graph.Listener) *Server {
			return withClientValidation(&Server{Port: port, Name: l.Hostname, SSL: true, HTTP2: h2, Directives: misdirected(l), Includes: b.serverIncludes})
		})
	}
	if len(def.Locations) == 0 {
		def.Locations = []*Location{notFoundLocation()}
	}
}

// cipherServers adds a server named by its hostname for each listener
// with ciphers of its own that no route gave one (newServer makes it):
// NGINX picks the server of a handshake by the best match of the client's
// server name among the port's server names, and without one of its own a
// name of the listener (*.a.example.com's x.a.example.com) could pick
// another listener's wildcard server (*.example.com's), whose ciphers the
// handshake would use before a request for the listener's routes came on
// the connection. With it, the best match is always a server of the
// listener the name belongs to.
func (b *builder) cipherServers(port int32, listeners []*graph.Listener, hosts []string, newServer func(*graph.Listener) *Server) {
	for _, l := range listeners {
		if l.Hostname == "" || slices.Contains(hosts, l.Hostname) {
			continue
		}
		t := b.serverTLS(port, l, nil)
		if t == nil {
			continue
		}
		srv := newServer(l)
		srv.TLS, srv.Locations = t, []*Location{notFoundLocation()}
		if l.TLS != nil {
			srv.CertPath = b.cert(l.TLS)
		}
		b.cfg.Servers = append(b.cfg.Servers, srv)
	}
}

// clientValidation returns a port's client certificate validation (its
// listeners share the Gateway's tls.frontend setting for the port): whether
// clients are asked for certificates, whether any is accepted, and the CA
// bundle verifying them, registered as a file.
func (b *builder) clientValidation(listeners []*graph.Listener) (certs, optional bool, caPath string) {
	for _, l := range listeners {
		cv := l.ClientValidation
		if cv == nil {
			continue
		}
		if cv.InsecureFallback {
			return true, true, ""
		}
		path := b.names.of(kindClientCAFile, string(cv.CAPEM))
		b.addCert(path, cv.CAPEM, objectNames("ConfigMap", cv.ConfigMaps)...)
		return true, false, path
	}
	return false, false, ""
}

// misdirectedCheck returns, for an HTTPS port, the server directives that
// answer 421 Misdirected Request when the listener the TLS server name (SNI)
// selects is not the one the Host header selects: a client reusing a
// connection for another host (HTTP/2 connection coalescing) must not reach
// that host's routes with the first host's certificate and settings. The
// SNI picks its listener as the Host does: an exact hostname, else the
// longest wildcard, else the listener without hostname.
//
// With the NginxProxy's disableSNIHostValidation, a connection may carry
// requests for another listener's hostname when the two listeners' TLS
// settings are the same: what 421 then guards is that no listener's routes
// are reached over a handshake its settings refuse. A handshake's ciphers
// are its SNI's server's, so listeners are compared by their ciphers (and
// their preference); protocols and key exchange groups are checked on
// every request anyway (handshakeChecks), and client certificate
// validation is the port's. A port whose listeners all have the same
// ciphers needs no check.
func (b *builder) misdirectedCheck(port int32, listeners []*graph.Listener) func(*graph.Listener) []Directive {
	key := func(l *graph.Listener) string { return l.ID }
	if b.cfg.Main.Proxy.RelaxSNI {
		key = cipherClass
		classes := map[string]bool{}
		for _, l := range listeners {
			classes[cipherClass(l)] = true
		}
		if len(classes) == 1 {
			return func(*graph.Listener) []Directive { return nil }
		}
	}
	m := &Map{Source: "$ssl_server_name", Variable: b.names.of(kindSNIListenerVar, strconv.Itoa(int(port))), Hostnames: true, Default: `""`}
	for _, l := range listeners {
		if l.Hostname == "" {
			m.Default = Quote(key(l))
			continue
		}
		m.Entries = append(m.Entries, MapEntry{Key: l.Hostname, Value: Quote(key(l))})
	}
	sort.Slice(m.Entries, func(i, j int) bool { return m.Entries[i].Key < m.Entries[j].Key })
	variable := b.putMap(m) // named by its port, which has one
	return func(l *graph.Listener) []Directive {
		want := `""`
		if l != nil {
			want = Quote(key(l))
		}
		return []Directive{{Name: "if", Args: []string{"(" + variable, "!=", want + ")"}, Block: []Directive{D("return", "421")}}}
	}
}

// cipherClass tells apart listeners whose handshakes differ by their
// ciphers: a digest of their ciphers and preference, never "" (which
// stands for no listener).
func cipherClass(l *graph.Listener) string {
	sum := sha256.Sum256([]byte(l.TLSOptions.Ciphers + "\x00" + l.TLSOptions.PreferServerCiphers))
	return "c" + hex.EncodeToString(sum[:8])
}

// mostSpecificListener returns the listener whose hostname best matches h:
// an equal hostname, else the longest matching wildcard, else one with no hostname.
func mostSpecificListener(ls []*graph.Listener, h string) *graph.Listener {
	var best *graph.Listener
	bestScore := -1
	for _, l := range ls {
		score := -1
		switch {
		case l.Hostname == h:
			score = 1 << 20
		case l.Hostname == "":
			score = 0
		case strings.HasPrefix(l.Hostname, "*.") && h != "" && strings.HasSuffix(strings.TrimPrefix(h, "*"), l.Hostname[1:]):
			score = len(l.Hostname)
		}
		if score > bestScore {
			best, bestScore = l, score
		}
	}
	return best
}

// cert registers a listener's certificate file and returns its path.
func (b *builder) cert(c *graph.Certificate) string {
	path := b.names.of(kindCertFile, c.Secret.Namespace, c.Secret.Name)
	b.addCert(path, c.PEM, "Secret "+c.Secret.String())
	return path
}

func notFoundLocation() *Location {
	return &Location{Path: "/", Directives: []Directive{D("return", "404")}}
}
