package config

import (
	"strconv"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// TCP and UDP listeners and their TCPRoutes and UDPRoutes. Each listener
// port gets a stream server that passes every connection (every UDP
// session) to the backends of the one route serving the listener (graph
// settles which), by weight: a split_clients on the client's address and
// port, so one connection, or one client's UDP session, stays with one
// backend. Backends receive the client's bytes as they are, without the
// PROXY protocol (the stream context sends it to Gatewall's own servers
// only); the backend sees NGINX's address, and NGINX logs the client's.
//
// A TCP listener without a serving route, or the share of a backend that
// cannot serve, gets its connections closed (the reject server TLS ports
// use). A UDP listener without a serving route is not listened on (the
// client's datagrams are refused by the kernel, which tells it at once),
// and the share of a UDP backend that cannot serve is dropped (an upstream
// whose one server is down).
//
// UDP sessions: NGINX ends a session after the NginxProxy's
// l4.udpSessionTimeout without a datagram either way. Any number of
// responses may come back (streaming protocols keep working); a DNS-like
// exchange ends after the timeout, holding two of the worker's
// connections until then. A TCP connection idle for l4.tcpIdleTimeout
// either way is closed.
//
// Each listener holds at most l4.maxConnections connections (sessions)
// at once, counted across the workers by limit_conn in one zone keyed by
// the listener's transport and port (a TCP and a UDP listener may share a
// port number; IPv4 and IPv6 clients of a listener are counted together).
// A connection beyond it is closed when accepted, a UDP datagram that
// would start a session beyond it is dropped; either costs a worker one
// connection for that moment only. The graph kept twice that many of
// every worker's connections for each listener (graph/sockets.go), so a
// flood of one listener leaves the others, the HTTP clients and the
// readiness probe their connections.

// l4Zone is the shared memory zone counting each listener's connections.
const l4Zone = "gatewall_l4_connections"

// l4ZoneSize holds a state for every TCP and UDP listener a Gateway can
// have at once (a state is 64 bytes of the zone's slabs while the
// listener has connections; workerConnections 65,535 admit at most about
// 16,000 listeners), so that no listener is refused for want of room in
// the zone. A fixed size keeps the zone, and its counts, across reloads.
const l4ZoneSize = "2m"

// l4ZoneKey tells the listeners apart: "TCP5000", "UDP5000".
const l4ZoneKey = "$protocol$server_port"

// udpClosedUpstream drops datagrams: its one server is down.
const udpClosedUpstream = "gatewall_udp_closed"

// L4Server is the stream server of a TCP or UDP listener's port.
type L4Server struct {
	Port int32
	UDP  bool
	// Target is where connections go: an upstream, a split's variable, or
	// the reject server's socket.
	Target string
}

// l4Port builds the server of a port's TCP or UDP listener (one: two on a
// port conflict, graph/listener.go).
func (b *builder) l4Port(g *graph.Gateway, port int32, l *graph.Listener) {
	udp := l.Source.Protocol == gatewayv1.UDPProtocolType
	var route *graph.Route
	for _, r := range g.Routes {
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if a.Listener == l && a.Serves() {
					route = r
				}
			}
		}
	}
	target := b.l4Target(route, udp)
	if udp && target == udpClosedUpstream {
		return // nothing to pass to: not listened on
	}
	b.stream.l4 = append(b.stream.l4, &L4Server{Port: port, UDP: udp, Target: target})
}

// l4Target is where a route's connections go: its backends' upstream or
// split, or the closing target when none can serve.
func (b *builder) l4Target(r *graph.Route, udp bool) string {
	closed := tlsRejectSocket()
	if udp {
		closed = udpClosedUpstream
	}
	if r == nil {
		return closed
	}
	rules := r.ValidRules()
	if len(rules) == 0 || len(rules[0].Backends) == 0 {
		return closed
	}
	return b.streamTarget(rules[0].Backends, kindL4Upstream, closed, kindL4SplitVar, b.stream.l4Splits)
}

// l4Uses says whether a TCP or UDP listener passes connections to target,
// directly or for a share of them (a split's bucket).
func (c *Config) l4Uses(target string) bool {
	for _, s := range c.L4Servers {
		if s.Target == target {
			return true
		}
	}
	for _, s := range c.L4Splits {
		for _, bk := range s.Buckets {
			if bk.Upstream == target {
				return true
			}
		}
	}
	return false
}

// writeL4 writes the TCP and UDP listeners' servers, their splits, and the
// upstream that drops datagrams when a split uses it. Their upstreams are
// the stream context's (writeStreamUpstreams).
func (c *Config) writeL4(w *writer) {
	if len(c.L4Servers) > 0 {
		w.blank()
		w.line("limit_conn_zone", l4ZoneKey, "zone="+l4Zone+":"+l4ZoneSize)
		// Refusing a client of a full listener is the listener's
		// limit at work, not NGINX failing.
		w.line("limit_conn_log_level", "warn")
	}
	if c.l4Uses(udpClosedUpstream) {
		w.blank()
		w.open("upstream", udpClosedUpstream)
		w.line("server", "127.0.0.1:9", "down")
		w.close()
	}
	for _, s := range c.L4Splits {
		w.blank()
		writeSplit(w, Quote("$remote_addr:$remote_port"), s)
	}
	for _, s := range c.L4Servers {
		w.blank()
		w.open("server")
		for _, l := range c.l4Listens(s) {
			w.line(l.words()...)
		}
		// The backend gets the client's bytes only.
		w.line("proxy_protocol", "off")
		w.line("limit_conn", l4Zone, strconv.Itoa(int(c.Main.L4.MaxConnections)))
		idle := c.Main.L4.TCPIdleTimeout
		if s.UDP {
			idle = c.Main.L4.UDPSessionTimeout
		}
		w.line("proxy_timeout", nginxTime(idle))
		w.line("proxy_pass", s.Target)
		w.close()
	}
}

// l4Listens are the listens of a TCP or UDP listener's server.
func (c *Config) l4Listens(s *L4Server) []listen {
	if s.UDP {
		return c.portListens(strconv.Itoa(int(s.Port)), []string{"udp"})
	}
	return c.streamListens(s.Port)
}
