package graph

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
)

// Every NGINX worker keeps one connection per listening socket (and one
// for its channel to the master); NGINX refuses a configuration whose
// worker_connections do not exceed its sockets, and with one more it
// starts but serves nothing: every client connection, the readiness probe
// included, finds no connection left. So a Gateway's listening sockets
// are a budget: worker_connections less ClientConnections kept for
// clients. It is spent before rendering, in the Gateway API's precedence
// (the Gateway's own listeners in order, then its ListenerSets by
// creation time and name, each in order; then routes, the oldest first:
// a TLSRoute passes its connections through a socket of its own, and the
// first route speaking HTTP/2 without TLS on a cleartext port needs two
// sockets behind the port), and what does not fit is refused on its own
// status: one namespace's ListenerSets or routes can no longer get the
// whole Gateway refused.
//
// TCP and UDP listeners' clients share the same connections: each
// connection (TCP) or session (UDP) of such a listener holds two of a
// worker's connections, the client's and the backend's, and nothing but
// NGINX's limit_conn bounds how many a listener's clients open (thousands
// of UDP source ports in a fraction of a second, hundreds of idle TCP
// connections). So each TCP or UDP listener is admitted with its limit
// (the NginxProxy's l4.maxConnections, enforced by NGINX across its
// workers: nginx/config/l4.go) and spends twice that of every worker's
// budget: all of a listener's connections may be in one worker (without
// reuseport a UDP datagram, and a new TCP connection, may go to any). A
// flood of one listener is then that listener's alone: it cannot take the
// connections of another listener, of HTTP clients or of the readiness
// probe.
//
// The count is package nginx/config's (listens.go), taken at its most for
// the sinks (six sockets, whether routes need them or not) and the
// Gateway's own cleartext ports (two sockets each for HTTP/2 without TLS,
// whether a route needs them or not): the configuration never opens more
// (TestSocketBudgetCoversTheConfiguration).

// ClientConnections are the connections of each worker that a Gateway's
// listening sockets and its TCP and UDP listeners' clients must leave for
// the other clients: an HTTP client proxied to a backend takes two, one
// passed through the stream module (TLS passthrough, gRPC on a cleartext
// port) up to four, and the kubelet's readiness probe one.
const ClientConnections = 64

// Sockets of the data plane's own servers, at their most.
const (
	// sinkSockets: the sinks answering 500, 503 and 204 (a mirror's
	// unsampled requests), over HTTP/1.1 and HTTP/2 each.
	sinkSockets = 6
	// endpointsSockets: the server the pod's endpoints client hands the
	// endpoints to (a unix socket, in every configuration).
	endpointsSockets = 1
	// sniffSockets: a cleartext port serving HTTP/2 without TLS (gRPC)
	// gets two unix sockets behind the stream module's sniffer, one for
	// HTTP/1.x and one for HTTP/2.
	sniffSockets = 2
)

// ConnectionsPerL4Client are the worker connections one TCP connection or
// UDP session of a TCP or UDP listener holds: the client's and the backend's.
const ConnectionsPerL4Client = 2

// The share of each TCP or UDP listener when the NginxProxy sets no
// l4.maxConnections: together they may take half of what workerConnections
// leaves after ClientConnections, each an equal part, within these bounds.
const (
	minSharedL4Connections = 16
	maxSharedL4Connections = 1024
)

// sharedL4Connections is each listener's share among n TCP and UDP listeners.
func sharedL4Connections(workerConnections, n int) int {
	share := (workerConnections - ClientConnections) / 2 / ConnectionsPerL4Client / max(n, 1)
	return min(max(share, minSharedL4Connections), maxSharedL4Connections)
}

// RouteReasonNoSocketLeft is Gatewall's Accepted reason for a route whose
// sockets the Gateway's budget has no room for.
const RouteReasonNoSocketLeft gatewayv1.RouteConditionReason = "NoSocketLeft"

// socketBudget counts a Gateway's listening sockets as listeners and
// routes are admitted.
type socketBudget struct {
	workerConnections int
	// limit is what the sockets may take: workerConnections less ClientConnections.
	limit, used int
	// families is how many IP families each port is listened on.
	families int
	ports    map[gatewayv1.PortNumber]*portSockets
	// tlsReject says whether the socket closing unclaimed TLS (or TCP)
	// connections is counted.
	tlsReject bool
	// passes are the TLSRoutes' pass sockets counted: target and certificate.
	passes map[string]bool
	// maxL4 is the connections (or sessions) each TCP or UDP listener may
	// hold, and l4 the worker connections the admitted ones hold at most.
	maxL4, l4 int
}

// passTarget describes where a TLSRoute's connections go, as the
// configuration's pass sockets tell them apart: its backends with their
// weights (the one backend's name alone), or "" when no backend can serve,
// where the socket closing connections takes them.
func passTarget(r *Route) string {
	rules := r.ValidRules()
	if len(rules) == 0 {
		return ""
	}
	var parts []string
	serving := false
	for _, be := range rules[0].Backends {
		name := "-" // closed: invalid, or no endpoints
		if be.Valid && len(be.Endpoints) > 0 {
			name, serving = be.Name, true
		}
		parts = append(parts, fmt.Sprintf("%s=%d", name, be.Weight))
	}
	switch {
	case !serving:
		return ""
	case len(parts) == 1:
		return rules[0].Backends[0].Name
	}
	return strings.Join(parts, " ")
}

// portSockets is what a port's admitted listeners and routes need of it:
// its TCP port (HTTP, HTTPS, TLS, TCP listeners) and its UDP port.
type portSockets struct{ http, https, tls, tcp, udp, sniffed bool }

// sockets are the port's: the port itself on each family, and the unix
// sockets behind it (a cleartext port's sniffer's, or a TLS port's HTTPS
// servers' behind the stream module).
func (p portSockets) sockets(families int) int {
	n := 0
	switch {
	case p.http && p.sniffed:
		n = families + sniffSockets
	case p.tls && p.https:
		n = families + 1
	case p.http || p.https || p.tls || p.tcp:
		n = families
	}
	if p.udp {
		n += families
	}
	return n
}

// newSocketBudget starts a Gateway's budget with the data plane's own
// sockets, or returns why its effective NginxProxy leaves no room for
// them and its clients (the Gateway is refused: no listener could ever fit).
// l4Listeners is how many TCP and UDP listeners share the connections
// kept for them.
func newSocketBudget(np *v1alpha2.NginxProxySpec, readinessPort int32, l4Listeners int) (*socketBudget, string) {
	b := &socketBudget{workerConnections: v1alpha2.DefaultWorkerConnections, families: 2, ports: map[gatewayv1.PortNumber]*portSockets{}, passes: map[string]bool{}}
	if np.WorkerConnections != nil {
		b.workerConnections = int(*np.WorkerConnections)
	}
	b.maxL4 = sharedL4Connections(b.workerConnections, l4Listeners)
	if np.L4 != nil && np.L4.MaxConnections != nil {
		b.maxL4 = int(*np.L4.MaxConnections)
	}
	if np.IPFamily != nil && *np.IPFamily != v1alpha2.IPFamilyDual {
		b.families = 1
	}
	b.limit = b.workerConnections - ClientConnections
	b.used = sinkSockets + endpointsSockets
	if np.MetricsPort() != 0 {
		b.used++ // the status server nginx-agent reads NGINX's counts from
	}
	if readinessPort != 0 {
		b.used += b.families
	}
	if b.used >= b.limit {
		return nil, fmt.Sprintf("workerConnections is %d: the data plane's own listening sockets take %d of each NGINX worker's connections and Gatewall keeps %d for clients, which leaves none for a listener; set workerConnections above %d, with room for the listeners (2 to 4 sockets a port)",
			b.workerConnections, b.used, ClientConnections, b.used+ClientConnections)
	}
	return b, ""
}

// listenerCost is how many sockets admitting l adds.
func (b *socketBudget) listenerCost(l *Listener) (int, portSockets) {
	cur := portSockets{}
	if p := b.ports[l.Source.Port]; p != nil {
		cur = *p
	}
	next := cur
	switch l.Source.Protocol {
	case gatewayv1.HTTPProtocolType:
		// The Gateway's own cleartext ports are counted sniffed from the
		// start: else a tenant's newer ListenerSets could take the
		// sockets the Gateway's own gRPC routes need there.
		next.http, next.sniffed = true, next.sniffed || l.Set == nil
	case gatewayv1.HTTPSProtocolType:
		next.https = true
	case gatewayv1.TLSProtocolType:
		next.tls = true
	case gatewayv1.TCPProtocolType:
		next.tcp = true
	case gatewayv1.UDPProtocolType:
		next.udp = true
	}
	cost := next.sockets(b.families)
	if b.ports[l.Source.Port] != nil {
		cost -= cur.sockets(b.families)
	}
	if (next.tls || next.tcp) && !b.tlsReject {
		cost++ // the server closing connections no route takes
	}
	return cost, next
}

// spent is what the admitted listeners and routes take of each worker's
// connections: their sockets, and the TCP and UDP listeners' connections.
func (b *socketBudget) spent() int { return b.used + b.l4 }

// l4Connections are the worker connections a listener's clients may hold
// at most: a TCP or UDP listener's, none for the others (their clients
// share what Gatewall keeps for clients).
func (b *socketBudget) l4Connections(l *Listener) int {
	switch l.Source.Protocol {
	case gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType:
		return ConnectionsPerL4Client * b.maxL4
	}
	return 0
}

// admitListeners spends the budget on the listeners that are accepted, in
// order, and refuses each that does not fit.
func (b *socketBudget) admitListeners(ls []*Listener) {
	for _, l := range ls {
		if !l.Attachable {
			continue
		}
		cost, next := b.listenerCost(l)
		conns := b.l4Connections(l)
		if b.spent()+cost+conns > b.limit {
			b.refuseListener(l, cost, conns)
			continue
		}
		b.used += cost
		b.l4 += conns
		b.ports[l.Source.Port] = &next
		b.tlsReject = b.tlsReject || next.tls || next.tcp
	}
}

func (b *socketBudget) refuseListener(l *Listener, cost, conns int) {
	msg := fmt.Sprintf("no listening socket is left for this listener: it needs %d, and the Gateway's data plane and the listeners before it take %d of the %d that workerConnections %d leaves after the %d Gatewall keeps for clients; raise workerConnections in the Gateway's NginxProxy, or use a port and protocol other listeners already use",
		cost, b.spent(), b.limit, b.workerConnections, ClientConnections)
	if conns > 0 {
		msg = fmt.Sprintf("no connections are left for this %s listener: it needs %d listening sockets and %d connections of each NGINX worker for its clients (l4.maxConnections %d, each connection or UDP session holding two, all of them possibly in one worker), and the Gateway's data plane and the listeners before it, with their clients' connections, take %d of the %d that workerConnections %d leaves after the %d Gatewall keeps for HTTP clients; raise workerConnections or lower l4.maxConnections in the Gateway's NginxProxy",
			l.Source.Protocol, cost, conns, b.maxL4, b.spent(), b.limit, b.workerConnections, ClientConnections)
	}
	l.Valid, l.Attachable = false, false
	l.Conditions = conditions.Set(l.Conditions, conditions.False(string(gatewayv1.ListenerConditionAccepted), string(gatewayv1.ListenerReasonPortUnavailable), msg))
}

// admitRoutes spends the budget on the routes, the oldest first, and
// refuses each that does not fit on every parent of this Gateway (its
// other Gateways decide for themselves).
func (b *socketBudget) admitRoutes(routes []*Route) {
	byAge := append([]*Route(nil), routes...)
	sort.SliceStable(byAge, func(i, j int) bool { return Older(byAge[i].Source, byAge[j].Source) })
	for _, r := range byAge {
		passes, sniffed := b.routeNeeds(r)
		cost := len(passes) + len(sniffed)*sniffSockets
		if b.spent()+cost > b.limit {
			b.refuseRoute(r, cost)
			continue
		}
		b.used += cost
		for pass := range passes {
			b.passes[pass] = true
		}
		for port := range sniffed {
			b.ports[port].sniffed = true
		}
	}
}

// routeNeeds are the sockets a route adds through its attachments to
// configured listeners. A TLSRoute's connections pass to its backends
// through a socket per set of backends and certificate it is served with
// (none on a passthrough listener) and TLS options (Listener.PassKey),
// shared by the routes with the same ones. A route whose clients may speak HTTP/2 without TLS (SpeaksH2C)
// makes each cleartext port it is on sniffed.
func (b *socketBudget) routeNeeds(r *Route) (passes map[string]bool, sniffed map[gatewayv1.PortNumber]bool) {
	passes, sniffed = map[string]bool{}, map[gatewayv1.PortNumber]bool{}
	target := ""
	if r.Kind == KindTLSRoute {
		target = passTarget(r)
	}
	h2c := !PassesConnections(r.Kind) && r.SpeaksH2C()
	for _, p := range r.Parents {
		for _, a := range p.Attachments {
			l := a.Listener
			if !l.Valid {
				continue // not configured: no socket
			}
			switch {
			case target != "":
				cert := ""
				if l.TLS != nil {
					cert = l.TLS.Secret.String() + "\n" + l.PassKey()
				}
				if pass := target + "\n" + cert; !b.passes[pass] {
					passes[pass] = true
				}
			case h2c && l.Source.Protocol == gatewayv1.HTTPProtocolType && b.ports[l.Source.Port] != nil && !b.ports[l.Source.Port].sniffed:
				sniffed[l.Source.Port] = true
			}
		}
	}
	return passes, sniffed
}

func (b *socketBudget) refuseRoute(r *Route, cost int) {
	msg := fmt.Sprintf("no listening socket is left for this %s: it needs %d, and the Gateway's data plane, its listeners and the older routes take %d of the %d that workerConnections %d leaves after the %d Gatewall keeps for clients; raise workerConnections in the Gateway's NginxProxy",
		r.Kind, cost, b.spent(), b.limit, b.workerConnections, ClientConnections)
	if !PassesConnections(r.Kind) {
		msg += ", or serve HTTP/2 without TLS on a port that already does"
	}
	for _, p := range r.Parents {
		if p.Attached() {
			p.Attachments = nil
			p.Conditions = []metav1.Condition{conditions.False(string(gatewayv1.RouteConditionAccepted), string(RouteReasonNoSocketLeft), msg), r.resolvedRefs}
		}
	}
}

// ListeningSockets is the most listening sockets the Gateway's
// configuration opens: what its budget admitted; 0 for a Gateway that is
// not accepted.
func (g *Gateway) ListeningSockets() int {
	if g.sockets == nil {
		return 0
	}
	return g.sockets.used
}

// L4Connections are the most worker connections the clients of the
// Gateway's admitted TCP and UDP listeners hold (ConnectionsPerL4Client
// times the limit of each); 0 for a Gateway that is not accepted.
// L4MaxConnections is the bound of each TCP and UDP listener's
// connections (the NginxProxy's l4.maxConnections, or the listeners'
// share of the Gateway's connections: sharedL4Connections).
func (g *Gateway) L4MaxConnections() int32 {
	if g.sockets == nil {
		return int32(minSharedL4Connections)
	}
	return int32(g.sockets.maxL4)
}

func (g *Gateway) L4Connections() int {
	if g.sockets == nil {
		return 0
	}
	return g.sockets.l4
}
