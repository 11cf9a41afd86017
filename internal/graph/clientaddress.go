package graph

import (
	"sort"
	"strconv"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Ports whose HTTP servers listen behind the stream module. On a
// cleartext port that serves HTTP/2 without TLS (a GRPCRoute, or an
// HTTPRoute to h2c backends) the stream module tells HTTP/1.x from HTTP/2
// (nginx/config/sniff.go); on a port with TLS passthrough listeners and
// HTTPS ones it reads the TLS server name (nginx/config/tlspassthrough.go).
// Either way it hands the connection to the HTTP servers on a unix socket,
// with the client's address in the PROXY protocol: the HTTP servers then
// take the address from it (NGINX's realip module, which reads one source
// per server), never from X-Forwarded-For. So rewriteClientIP's
// XForwardedFor mode cannot reach those ports, and the Gateway's status
// says which they are; its ProxyProtocol mode reaches every port (the
// stream module reads the load balancer's PROXY header and passes the
// address on).

// SniffsPort says whether the HTTP servers of a cleartext port listen
// behind the stream module's sniffer: a route attached to one of its
// valid listeners may be spoken to in HTTP/2 without TLS, and HTTP/2 is
// not disabled.
func (g *Gateway) SniffsPort(port int32) bool {
	if g.NginxProxy != nil && g.NginxProxy.DisableHTTP2 != nil && *g.NginxProxy.DisableHTTP2 {
		return false
	}
	for _, r := range g.Routes {
		if PassesConnections(r.Kind) || !r.SpeaksH2C() {
			continue
		}
		for _, p := range r.Parents {
			for _, a := range p.Attachments {
				if int32(a.Listener.Source.Port) == port && a.Listener.Valid {
					return true
				}
			}
		}
	}
	return false
}

// PortsBehindStream are the ports, sorted, whose HTTP servers listen
// behind the stream module: cleartext ports it sniffs, and ports with
// both TLS passthrough and HTTPS listeners.
func (g *Gateway) PortsBehindStream() []int32 {
	type kinds struct{ http, https, tls bool }
	byPort := map[int32]*kinds{}
	var order []int32
	for _, l := range g.ValidListeners() {
		p := int32(l.Source.Port)
		k := byPort[p]
		if k == nil {
			k = &kinds{}
			byPort[p] = k
			order = append(order, p)
		}
		switch l.Source.Protocol {
		case gatewayv1.HTTPProtocolType:
			k.http = true
		case gatewayv1.HTTPSProtocolType:
			k.https = true
		case gatewayv1.TLSProtocolType:
			k.tls = true
		}
	}
	var out []int32
	for _, p := range order {
		k := byPort[p]
		if k.tls && k.https || k.http && !k.https && !k.tls && g.SniffsPort(p) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// forwardedForNote says on which ports rewriteClientIP's XForwardedFor
// mode is not applied ("" when it is everywhere, or not asked for).
func (g *Gateway) forwardedForNote() string {
	r := g.NginxProxy.RewriteClientIP
	if r == nil || r.Mode == nil || *r.Mode != v1alpha2.RewriteClientIPModeXForwardedFor {
		return ""
	}
	ports := g.PortsBehindStream()
	if len(ports) == 0 {
		return ""
	}
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = strconv.Itoa(int(p))
	}
	return "rewriteClientIP mode XForwardedFor on port(s) " + strings.Join(names, ", ") +
		": their HTTP servers listen behind the stream module (gRPC on a cleartext port, or TLS passthrough beside HTTPS), " +
		"which passes them the connection's peer address: X-Forwarded-For is not read there (mode ProxyProtocol is)"
}
