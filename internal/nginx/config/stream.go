package config

import (
	"strconv"

	"github.com/gatewall/gatewall/internal/validation"
)

// The stream context: the sniffers of cleartext ports (sniff.go), the
// TLS ports (tlspassthrough.go) and the TCP and UDP listeners (l4.go), in
// one file included from nginx.conf.

// hasStream says whether the configuration has a stream context: sniffed
// ports, TLS passthrough ports, or TCP and UDP listeners.
func (c *Config) hasStream() bool {
	return len(c.Sniffed) > 0 || len(c.TLSPorts) > 0 || len(c.L4Servers) > 0
}

// streamConf writes stream.conf: the hash tables are sized from the keys
// its blocks record, written before them.
func (c *Config) streamConf() []byte {
	keys := newHashKeys()
	w := &writer{keys: keys}
	w.comment(header)
	if len(c.Sniffed) > 0 {
		w.line("js_import", "gw", "from", SniffJSPath)
		w.line("js_var", "$gw_proto", "h1")
	}
	w.line("proxy_protocol", "on")
	c.writeStreamRealIP(w)
	writeDefaultTLSProtocols(w) // TLS listeners in mode Terminate
	// As for http (writeUpstreamDefaults): a connection that cannot be
	// established soon goes on to another endpoint.
	w.line("proxy_connect_timeout", nginxTime(c.Main.Upstreams.ConnectTimeout))
	w.line("proxy_next_upstream_tries", strconv.Itoa(int(c.Main.Upstreams.MaxTries)))
	head, w := w, &writer{keys: keys}
	for _, port := range c.Sniffed {
		w.blank()
		w.open("server")
		for _, l := range c.streamListens(port) {
			w.line(l.words()...)
		}
		w.line("js_preread", "gw.preread")
		w.line("proxy_pass", sniffSocket(port, "$gw_proto"))
		w.close()
	}
	c.writeStreamUpstreams(w)
	c.writeTLSPassthrough(w)
	if len(c.TLSPorts) == 0 {
		c.writeReject(w) // else written with the TLS ports'
	}
	c.writeL4(w)
	sizes := &writer{}
	for _, dir := range familyDirectives(keys.finish().streamHashFamilies()) {
		writeDirective(sizes, dir)
	}
	head.writeAll(sizes, w)
	return head.bytes()
}

// writeDefaultTLSProtocols writes the protocols of servers that terminate
// TLS and set none (validation.DefaultTLSProtocols): NGINX 1.22's own
// default (TLSv1 TLSv1.1 TLSv1.2) leaves TLS 1.3 off, and offers TLS 1.0
// and 1.1, which the data plane's OpenSSL 3.0 refuses at its security
// level anyway.
func writeDefaultTLSProtocols(w *writer) {
	w.line(append([]string{"ssl_protocols"}, validation.DefaultTLSProtocols...)...)
}
