package config

import (
	"slices"
	"strconv"
)

// Every listen directive Gatewall writes comes from this file, and the
// listening sockets NGINX opens are counted from the same lists
// (ListeningSockets). The graph budgets them before rendering, from the
// listeners and TLSRoutes (graph/sockets.go), at least as many as are
// written here: a change here changes the budget there.

// listen is one listen directive: its address and its parameters.
type listen struct {
	addr   string
	params []string
}

func (l listen) words() []string { return append([]string{"listen", l.addr}, l.params...) }

// serverListens are the listens of an http server: the port on IPv4 and
// IPv6 (as the effective NginxProxy's ipFamily allows), or, on a sniffed
// port, the two unix sockets the stream sniffer passes connections to.
func (c *Config) serverListens(s *Server) []listen {
	var params []string
	if s.Default {
		params = append(params, "default_server")
	}
	if c.sniffed(s.Port) {
		h1 := listen{sniffSocket(s.Port, "h1"), append(params, "proxy_protocol")}
		h2 := listen{sniffSocket(s.Port, "h2"), append(append(params[:len(params):len(params)], "http2"), "proxy_protocol")}
		return []listen{h1, h2}
	}
	if s.SSL {
		params = append(params, "ssl")
	}
	if s.HTTP2 {
		params = append(params, "http2")
	}
	if c.tlsFronted(s.Port) {
		return []listen{{httpsSocket(s.Port), append(params, "proxy_protocol")}}
	}
	return c.portListens(strconv.Itoa(int(s.Port)), c.clientParams(params))
}

// clientParams are the parameters of a TCP socket clients reach: with
// rewriteClientIP mode ProxyProtocol they must send the PROXY protocol
// (realip.go).
func (c *Config) clientParams(params []string) []string {
	if c.proxyProtocol() {
		return append(params[:len(params):len(params)], "proxy_protocol")
	}
	return params
}

// behindStream says whether a port's http servers listen behind a stream
// server, which passes them the client's address with the PROXY protocol.
func (c *Config) behindStream(port int32) bool { return c.sniffed(port) || c.tlsFronted(port) }

// tlsFronted says whether port is a TLS passthrough port with HTTPS servers.
func (c *Config) tlsFronted(port int32) bool {
	for _, p := range c.TLSPorts {
		if p.Port == port {
			return p.HTTPS
		}
	}
	return false
}

// portListens listen on a TCP port on each IP family the NginxProxy allows.
func (c *Config) portListens(port string, params []string) []listen {
	var out []listen
	if c.Main.IPv4 {
		out = append(out, listen{port, params})
	}
	if c.Main.IPv6 {
		out = append(out, listen{"[::]:" + port, params})
	}
	return out
}

// sinkListens are the listens of the internal server answering a fixed
// status, over HTTP/1.1 and HTTP/2.
func sinkListens(code int) []listen {
	return []listen{{sinkSocket(code), nil}, {sinkSocketH2(code), []string{"http2"}}}
}

// streamListens are the listens of a stream server on a port clients
// reach (a sniffed port's, a TLS passthrough port's, a TCP listener's).
func (c *Config) streamListens(port int32) []listen {
	return c.portListens(strconv.Itoa(int(port)), c.clientParams(nil))
}

// tlsRejectListen and tlsPassListen are the listens of the TLS passthrough
// servers behind a TLS port's stream server: the closing one reads nothing,
// the passing ones read the PROXY protocol header the front sends.
func tlsRejectListen() listen { return listen{tlsRejectSocket(), nil} }
func tlsPassListen(p *TLSPass) listen {
	if p.CertPath != "" {
		return listen{p.Socket, []string{"ssl", "proxy_protocol"}}
	}
	return listen{p.Socket, []string{"proxy_protocol"}}
}

// ListeningSockets are the distinct addresses NGINX listens on with this
// configuration, sorted as written: http servers sharing an address share
// one socket.
func (c *Config) ListeningSockets() []string {
	var out []string
	seen := map[string]bool{}
	add := func(ls []listen) {
		for _, l := range ls {
			// A UDP port is a socket of its own beside the TCP one.
			addr := l.addr
			if slices.Contains(l.params, "udp") {
				addr += " udp"
			}
			if !seen[addr] {
				seen[addr] = true
				out = append(out, addr)
			}
		}
	}
	for _, code := range c.Sinks {
		add(sinkListens(code))
	}
	for _, s := range c.sortedServers() {
		add(c.serverListens(s))
	}
	for _, port := range c.Sniffed {
		add(c.streamListens(port))
	}
	if c.rejects() {
		add([]listen{tlsRejectListen()})
	}
	for _, p := range c.TLSPasses {
		add([]listen{tlsPassListen(p)})
	}
	for _, p := range c.TLSPorts {
		add(c.streamListens(p.Port))
	}
	for _, s := range c.L4Servers {
		add(c.l4Listens(s))
	}
	if c.Main.StubStatus {
		add([]listen{{addr: StatusSocket}})
	}
	add([]listen{endpointsListen()})
	add(c.readinessListens())
	return out
}

// endpointsListen is the listen of the server taking endpoint updates.
func endpointsListen() listen { return listen{addr: EndpointsSocket} }

// readinessListens are the listens of the readiness server (none without
// a readiness port).
func (c *Config) readinessListens() []listen {
	if c.Main.ReadinessPort == 0 {
		return nil
	}
	return c.portListens(strconv.Itoa(int(c.Main.ReadinessPort)), nil)
}
