package graph

import (
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// A listener's tls.options are NGINX Gateway Fabric's keys
// (validation.TLSOptionKeys), read on the listeners where NGINX
// terminates TLS: HTTPS listeners, and TLS listeners in mode Terminate.
// A known key with a value NGINX or the data plane's OpenSSL would not
// take refuses the listener (UnsupportedValue, naming the key and why);
// a key Gatewall does not read (a typo, another implementation's) is
// named in the listener's Accepted message, and the listener serves: the
// Gateway API leaves options to implementations, and one Gatewall does
// not know cannot be one the listener's owner expects it to apply. On a
// passthrough listener NGINX terminates nothing, so a known key, which
// could be a security setting its owner relies on, refuses it.
//
// NGINX 1.22 does not apply every setting per listener on a port several
// HTTPS listeners share (handshake.go).

// readTLSOptions reads a listener's tls.options: the refusal of the
// listener ("" when none), and a note for its Accepted message.
func readTLSOptions(l *Listener) (refusal, note string) {
	t := l.Source.TLS
	if t == nil || len(t.Options) == 0 {
		return "", ""
	}
	options := make(map[string]string, len(t.Options))
	for k, v := range t.Options {
		options[string(k)] = string(v)
	}
	parsed, unknown, errs := validation.ParseTLSOptions(options)
	if len(unknown) > 0 {
		quoted := make([]string, len(unknown))
		for i, k := range unknown {
			quoted[i] = conditions.Quote(k)
		}
		note = fmt.Sprintf("tls.options %s: not read by Gatewall, which reads %s", strings.Join(quoted, ", "), strings.Join(validation.TLSOptionKeys, ", "))
	}
	if len(unknown) < len(options) && !terminates(t) {
		return "tls.options: the nginx.org/ssl-* keys do not apply to a listener in tls.mode Passthrough: its backends terminate TLS", note
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		return strings.Join(msgs, "; "), note
	}
	l.TLSOptions = parsed
	return "", note
}

// PassKey tells apart the stream servers that terminate TLS for TLS
// listeners in mode Terminate (nginx/config/tlspassthrough.go): those with
// the same certificate and backends share one unless their options
// differ, and a listener with a shared session cache keeps its own, as
// its cache is counted once for the listener (sessionBudget). "" for a
// listener without options.
func (l *Listener) PassKey() string {
	o := l.TLSOptions
	if o.Protocols == nil && o.Ciphers == "" && o.PreferServerCiphers == "" && o.Curves == nil && o.SessionCache == "" && o.SessionTimeout == "" {
		return ""
	}
	key := fmt.Sprintf("%q %q %q %q %q %q", o.Protocols, o.Ciphers, o.PreferServerCiphers, o.Curves, o.SessionCache, o.SessionTimeout)
	if o.SessionCacheBytes > 0 {
		key += " " + l.ID
	}
	return key
}

// noteAccepted adds a note to an accepted listener's Accepted message.
func (l *Listener) noteAccepted(note string) {
	c := conditions.Find(l.Conditions, string(gatewayv1.ListenerConditionAccepted))
	if c == nil || c.Status != "True" || note == "" {
		return
	}
	l.Conditions = conditions.Set(l.Conditions, conditions.True(c.Type, c.Reason, c.Message+"; "+note))
}

// sessionBudget is what the Gateway's TLS session caches hold (shared
// memory: validation.SSLSessionCacheBudget together), spent in the
// Gateway API's precedence as listeners are admitted. NGINX keeps one
// session cache per HTTPS port (the largest its listeners ask:
// handshake.go) and one per TLS listener in mode Terminate.
type sessionBudget struct {
	used  int64
	sizes map[string]int64
}

func newSessionBudget() *sessionBudget { return &sessionBudget{sizes: map[string]int64{}} }

// sessionCacheKey is what holds a listener's session cache: its port's
// HTTPS servers, or the listener itself.
func sessionCacheKey(l *Listener) string {
	if l.Source.Protocol == gatewayv1.HTTPSProtocolType {
		return fmt.Sprintf("port %d", l.Source.Port)
	}
	return "listener " + l.ID
}

// admit spends the budget on the listeners' session caches, in order,
// and refuses each whose cache does not fit.
func (b *sessionBudget) admit(ls []*Listener) {
	for _, l := range ls {
		ask := l.TLSOptions.SessionCacheBytes
		if !l.Attachable || ask == 0 {
			continue
		}
		key := sessionCacheKey(l)
		if have := b.sizes[key]; ask > have {
			if b.used-have+ask > validation.SSLSessionCacheBudget {
				l.Valid, l.Attachable = false, false
				l.Conditions = conditions.Set(l.Conditions, conditions.False(string(gatewayv1.ListenerConditionAccepted), string(gatewayv1.ListenerReasonUnsupportedValue),
					fmt.Sprintf("tls.options[%s] %s: the Gateway's TLS session caches may hold %s together (shared memory of the data plane), and the listeners before this one hold %s of it; ask for less",
						validation.TLSOptionSessionCache, conditions.Quote(l.TLSOptions.SessionCache), mib(validation.SSLSessionCacheBudget), mib(b.used))))
				continue
			}
			b.used += ask - have
			b.sizes[key] = ask
		}
	}
}

// mib writes bytes in MiB, or KiB under one MiB.
func mib(n int64) string {
	if n%(1<<20) == 0 || n >= 1<<20 {
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
