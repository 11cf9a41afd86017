package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/validation"
)

// NGINX 1.22 picks an HTTPS server by the client's server name (SNI) in
// OpenSSL's servername callback, after OpenSSL negotiated the protocol
// version and the key exchange group with the port's default server's
// settings; the session cache and timeout, too, stay the default
// server's (measured with Debian 12's NGINX 1.22.1 and OpenSSL 3.0: a
// server with ssl_protocols TLSv1.3 accepted TLS 1.2 for its name, one
// with ssl_ecdh_curve secp384r1 negotiated X25519, one with a session
// cache of its own resumed no session by its ID when the default server
// had none, and its tickets had the default server's lifetime).
// Ciphers, and the preference of the server's, are the selected
// server's. So, per HTTPS port:
//
//   - the default server negotiates the union of the protocols and groups
//     of the port's listeners (one without the option counts as the
//     default: TLSv1.2 TLSv1.3, auto); when they all agree that is each
//     listener's, enforced in the handshake;
//   - when they differ, each listener allowing less than the union is held
//     to its own after the handshake: its requests over another protocol
//     or group are answered 421 (Misdirected Request, as a request whose
//     server name picked another listener is), and its Accepted message
//     says so;
//   - TLS 1.0 and 1.1 also need OpenSSL's security level 0 in the server
//     the server name selects (a listener's @SECLEVEL=0): at the data
//     plane's level 2 their handshakes fail after the name is read (no
//     signature algorithm fits). A listener at level 2 is still checked
//     after the handshake when its port allows them: a name of its own
//     may select another listener's server (nginx/config's cipherServers);
//   - the session cache is the largest its listeners ask, the session
//     timeout the shortest (a listener without them counts as NGINX's
//     none and 5m); listeners that asked for another are told.
//
// TLS listeners in mode Terminate have a stream server each (their own
// socket), where every option applies in the handshake.

// PortHandshake is what the default server of an HTTPS port negotiates
// for all its listeners.
type PortHandshake struct {
	// Protocols are the protocols, in validation.TLSProtocols' order.
	Protocols []string
	// Curves are the groups, by $ssl_curve name; nil: OpenSSL's own list
	// (auto), when no listener names groups.
	Curves []string
	// SessionCache is "" (NGINX's default, none), "off", or the size of a
	// shared cache; SessionTimeout "" (NGINX's 5m) or an NGINX time.
	SessionCache, SessionTimeout string
}

// Handshake returns what the default server of an HTTPS port negotiates,
// or nil for a port without valid HTTPS listeners.
func (g *Gateway) Handshake(port gatewayv1.PortNumber) *PortHandshake {
	return g.handshakes[port]
}

// settleHandshakes decides each HTTPS port's handshake from its valid
// listeners, and the checks and notes of the listeners it does not hold
// to their own options.
func (g *Gateway) settleHandshakes() {
	byPort := map[gatewayv1.PortNumber][]*Listener{}
	for _, l := range g.ValidListeners() {
		if l.Source.Protocol == gatewayv1.HTTPSProtocolType {
			byPort[l.Source.Port] = append(byPort[l.Source.Port], l)
		}
	}
	ports := make([]gatewayv1.PortNumber, 0, len(byPort))
	for p := range byPort {
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	g.handshakes = map[gatewayv1.PortNumber]*PortHandshake{}
	for _, port := range ports {
		ls := byPort[port]
		h := &PortHandshake{}
		settleProtocols(port, ls, h)
		settleCurves(port, ls, h)
		settleSessions(port, ls, h)
		g.handshakes[port] = h
	}
}

func settleProtocols(port gatewayv1.PortNumber, ls []*Listener, h *PortHandshake) {
	union := map[string]bool{}
	for _, l := range ls {
		for _, p := range l.TLSOptions.EffectiveProtocols() {
			union[p] = true
		}
	}
	for _, p := range validation.TLSProtocols {
		if union[p] {
			h.Protocols = append(h.Protocols, p)
		}
	}
	for _, l := range ls {
		mine := l.TLSOptions.EffectiveProtocols()
		if !slices.Equal(mine, h.Protocols) {
			l.CheckProtocols = mine
			l.noteAccepted(fmt.Sprintf("NGINX 1.22 negotiates the TLS protocol once for all HTTPS listeners of port %d, before it reads the server name, and another listener of the port allows more than this one's %s: a request to this listener over another protocol is answered 421 (Misdirected Request) after the handshake",
				port, strings.Join(mine, " ")))
		}
	}
}

func settleCurves(port gatewayv1.PortNumber, ls []*Listener, h *PortHandshake) {
	named := slices.ContainsFunc(ls, func(l *Listener) bool { return l.TLSOptions.Curves != nil })
	if !named {
		return // every listener has OpenSSL's own list
	}
	for _, l := range ls {
		for _, c := range l.TLSOptions.EffectiveCurves() {
			if !slices.Contains(h.Curves, c) {
				h.Curves = append(h.Curves, c)
			}
		}
	}
	union := len(h.Curves)
	if union == len(validation.AutoTLSGroups) && !slices.ContainsFunc(h.Curves, func(c string) bool { return !slices.Contains(validation.AutoTLSGroups, c) }) {
		h.Curves = nil // OpenSSL's own list
	}
	for _, l := range ls {
		mine := l.TLSOptions.EffectiveCurves()
		if len(mine) != union { // each a subset of the union, without repeats
			l.CheckCurves = mine
			l.noteAccepted(fmt.Sprintf("NGINX 1.22 picks the key exchange group once for all HTTPS listeners of port %d, before it reads the server name, and another listener of the port allows groups this one does not: a request to this listener over a group other than %s is answered 421 (Misdirected Request) after the handshake",
				port, strings.Join(mine, ", ")))
		}
	}
}

func settleSessions(port gatewayv1.PortNumber, ls []*Listener, h *PortHandshake) {
	var timeout int64
	var cacheBytes int64
	allOff := true
	for _, l := range ls {
		o := l.TLSOptions
		if t := o.EffectiveSessionTimeout(); timeout == 0 || t < timeout {
			timeout, h.SessionTimeout = t, o.SessionTimeout
		}
		if o.SessionCacheBytes > cacheBytes {
			cacheBytes, h.SessionCache = o.SessionCacheBytes, o.SessionCache
		}
		allOff = allOff && o.SessionCache == "off"
	}
	if cacheBytes == 0 && allOff {
		h.SessionCache = "off"
	}
	cache := h.SessionCache
	if cache == "" {
		cache = "none"
	}
	for _, l := range ls {
		o := l.TLSOptions
		if o.EffectiveSessionTimeout() != timeout {
			l.noteAccepted(fmt.Sprintf("TLS sessions on port %d are resumed for %ds at most: NGINX 1.22 keeps one session timeout for all HTTPS listeners of a port, and the shortest its listeners ask applies (NGINX's 5m for one that asks none)", port, timeout))
		}
		if o.SessionCache != "" && o.SessionCache != h.SessionCache && !(o.SessionCache == "none" && h.SessionCache == "") {
			l.noteAccepted(fmt.Sprintf("the TLS session cache of port %d is %s: NGINX 1.22 keeps one session cache for all HTTPS listeners of a port, the largest its listeners ask (NGINX's none when none asks one)", port, cache))
		}
	}
}
