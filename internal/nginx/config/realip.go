package config

import (
	"net/netip"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// The client's address behind a load balancer or proxy (NginxProxy
// rewriteClientIP), with NGINX's realip modules:
//
//   - ProxyProtocol: every TCP listening socket the clients reach (the HTTP
//     servers' ports, the stream module's sniffing and TLS ports, the TCP
//     listeners) requires the PROXY protocol, and the address in it is
//     taken when the peer is trusted (set_real_ip_from): http.conf for the
//     HTTP servers, stream.conf for the stream servers, which pass the
//     address on to the HTTP servers behind them in their own PROXY
//     header, as they always do (those servers trust only unix:, the
//     stream module). UDP listeners take none (NGINX reads no PROXY
//     protocol over UDP); the readiness port neither (the kubelet's probe
//     sends none).
//   - XForwardedFor: the HTTP servers listening on ports take the address
//     from X-Forwarded-For of trusted peers, the right-most one or, with
//     setIPRecursively, the right-most untrusted one. The HTTP servers
//     behind the stream module keep the address it passes them: NGINX's
//     realip module reads one source per server (graph.PortsBehindStream;
//     the Gateway's status names those ports).
//
// An untrusted peer's header is ignored: $remote_addr stays the peer's,
// and with it what backends (X-Forwarded-For, X-Real-IP), the access log,
// rate limits ($binary_remote_addr) and the balancer's ip_hash and hash
// see. X-Forwarded-Port is the port NGINX listens on, never one a PROXY
// header names ($gw_server_port).

// RealIP is where the HTTP servers take the client's address from.
type RealIP struct {
	// Header is real_ip_header: "proxy_protocol", "X-Forwarded-For", or
	// "" when the address is the connection's.
	Header string
	// From are the trusted addresses and CIDRs, host bits cleared.
	From []string
	// Recursive is real_ip_recursive (X-Forwarded-For only).
	Recursive bool
}

// realIP reads rewriteClientIP. Host names are not trusted (NGINX would
// resolve them while loading its configuration, and refuse it when one
// does not resolve), nor addresses without a mode (graph.NotProgrammed
// says so).
func realIP(r *v1alpha2.RewriteClientIP) RealIP {
	if r == nil || r.Mode == nil {
		return RealIP{}
	}
	var out RealIP
	for _, a := range r.TrustedAddresses {
		switch a.Type {
		case v1alpha2.RewriteClientIPCIDRAddressType:
			if p, ok := validation.TrustedCIDR(a.Value); ok {
				out.From = append(out.From, p.String())
			}
		case v1alpha2.RewriteClientIPIPAddressType:
			if ip, err := netip.ParseAddr(a.Value); err == nil {
				out.From = append(out.From, ip.String())
			}
		}
	}
	switch *r.Mode {
	case v1alpha2.RewriteClientIPModeProxyProtocol:
		out.Header = "proxy_protocol"
	case v1alpha2.RewriteClientIPModeXForwardedFor:
		out.Header = "X-Forwarded-For"
		out.Recursive = isTrue(r.SetIPRecursively)
	}
	// Only host names: nobody is trusted, but the load balancer still
	// sends the PROXY protocol, which listeners must read.
	return out
}

// proxyProtocol says whether the clients' TCP listening sockets require
// the PROXY protocol.
func (c *Config) proxyProtocol() bool { return c.Main.Proxy.RealIP.Header == "proxy_protocol" }

// writeRealIP writes the HTTP servers' realip settings at http level
// (servers behind the stream module replace them with their own).
func (c *Config) writeRealIP(w *writer) {
	r := c.Main.Proxy.RealIP
	if r.Header == "" || len(r.From) == 0 {
		return
	}
	for _, from := range r.From {
		w.line("set_real_ip_from", from)
	}
	w.line("real_ip_header", r.Header)
	if r.Recursive {
		w.line("real_ip_recursive", "on")
	}
}

// writeStreamRealIP writes the stream servers' trusted peers, whose PROXY
// header's address becomes the connection's (and so the address the
// stream servers pass on).
func (c *Config) writeStreamRealIP(w *writer) {
	if !c.proxyProtocol() {
		return
	}
	for _, from := range c.Main.Proxy.RealIP.From {
		w.line("set_real_ip_from", from)
	}
}
