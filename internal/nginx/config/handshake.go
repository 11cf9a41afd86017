package config

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/validation"
)

// The TLS settings of HTTPS servers. NGINX 1.22 negotiates the protocol,
// the key exchange group and the session with the port's default server's
// settings, before the server name picks a server; the ciphers and their
// preference are the picked server's (graph/handshake.go). So the default
// server gets what graph.PortHandshake decided for the port, every server
// its listener's ciphers, and a listener the port's handshake allows more
// than answers 421 to requests negotiated otherwise.

// serverTLS returns the TLS settings of a server of an HTTPS port whose
// listener is l (nil for a default server that belongs to none); h, when
// set, makes it the port's default server.
func (b *builder) serverTLS(port int32, l *graph.Listener, h *graph.PortHandshake) *ServerTLS {
	t := &ServerTLS{}
	if l != nil {
		t.Ciphers, t.PreferServerCiphers = l.TLSOptions.Ciphers, l.TLSOptions.PreferServerCiphers
	}
	if h != nil {
		if !slices.Equal(h.Protocols, validation.DefaultTLSProtocols) {
			t.Protocols = h.Protocols
		}
		t.ECDHCurve = strings.Join(h.Curves, ":")
		t.SessionCache, t.SessionTimeout = h.SessionCache, h.SessionTimeout
		if h.SessionCache != "" && h.SessionCache != "off" {
			t.SessionCacheZone = b.names.of(kindSessionZone, strconv.Itoa(int(port)))
		}
	}
	if t.empty() {
		return nil
	}
	return t
}

func (t *ServerTLS) empty() bool {
	return t.Protocols == nil && t.Ciphers == "" && t.PreferServerCiphers == "" && t.ECDHCurve == "" && t.SessionCache == "" && t.SessionTimeout == ""
}

// passTLS returns the TLS settings of the stream servers terminating TLS
// for a TLS listener in mode Terminate: each listens on a socket of its
// own, so all of them apply in the handshake. Its session cache is one
// zone for all its servers (graph counts it once: sessionBudget).
func (b *builder) passTLS(l *graph.Listener) *ServerTLS {
	o := l.TLSOptions
	t := &ServerTLS{Protocols: o.Protocols, Ciphers: o.Ciphers, PreferServerCiphers: o.PreferServerCiphers,
		ECDHCurve: strings.Join(o.Curves, ":"), SessionCache: o.SessionCache, SessionTimeout: o.SessionTimeout}
	if slices.Equal(t.Protocols, validation.DefaultTLSProtocols) {
		t.Protocols = nil // stream.conf's
	}
	if t.SessionCache == "none" {
		t.SessionCache = "" // NGINX's default
	}
	if t.SessionCache != "" && t.SessionCache != "off" {
		t.SessionCacheZone = b.names.of(kindSessionZone, append([]string{"listener"}, strings.Split(l.ID, "/")...)...)
	}
	if t.empty() {
		return nil
	}
	return t
}

// handshakeChecks are a listener's server directives answering 421 to a
// request whose connection was negotiated with a protocol or group the
// listener does not allow (its port's handshake allows them for others).
func (b *builder) handshakeChecks(l *graph.Listener) []Directive {
	if l == nil {
		return nil
	}
	var out []Directive
	check := func(kind nameKind, source string, allowed []string) {
		m := &Map{Source: source, Default: "1"}
		for _, v := range allowed {
			m.Entries = append(m.Entries, MapEntry{Key: v, Value: `""`})
		}
		slices.SortFunc(m.Entries, func(a, b MapEntry) int { return strings.Compare(a.Key, b.Key) })
		variable := b.addMap(kind, m)
		out = append(out, Directive{Name: "if", Args: []string{"(" + variable + ")"}, Block: []Directive{D("return", "421")}})
	}
	if l.CheckProtocols != nil {
		check(kindTLSVersionVar, "$ssl_protocol", l.CheckProtocols)
	}
	if l.CheckCurves != nil {
		// A key exchange without a group (RSA in TLS 1.2) names none, and
		// the listener's own settings would allow it too.
		check(kindTLSGroupVar, "$ssl_curve", append([]string{`""`}, l.CheckCurves...))
	}
	return out
}
