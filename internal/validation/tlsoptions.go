package validation

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// The keys of a listener's tls.options Gatewall reads: NGINX Gateway
// Fabric's, with its value syntax, checked against what NGINX 1.22 and
// OpenSSL 3.0 on the data plane accept.
const (
	TLSOptionProtocols           = "nginx.org/ssl-protocols"
	TLSOptionCiphers             = "nginx.org/ssl-ciphers"
	TLSOptionPreferServerCiphers = "nginx.org/ssl-prefer-server-ciphers"
	TLSOptionSessionCache        = "nginx.org/ssl-session-cache"
	TLSOptionSessionTimeout      = "nginx.org/ssl-session-timeout"
	TLSOptionECDHCurve           = "nginx.org/ssl-ecdh-curve"
)

// TLSOptionKeys are the keys Gatewall reads, sorted.
var TLSOptionKeys = []string{TLSOptionCiphers, TLSOptionECDHCurve, TLSOptionPreferServerCiphers,
	TLSOptionProtocols, TLSOptionSessionCache, TLSOptionSessionTimeout}

// TLSProtocols are the protocols ssl-protocols may name, in order. SSLv2
// and SSLv3 are not among them: Debian's OpenSSL 3.0 is built without
// them, and NGINX would accept the words and negotiate nothing.
var TLSProtocols = []string{"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}

// DefaultTLSProtocols are the protocols of a listener that names none:
// NGINX 1.23.4's default and later's (NGINX 1.22's, TLSv1 TLSv1.1
// TLSv1.2, leaves TLS 1.3 off and offers versions OpenSSL 3.0 refuses at
// the data plane's security level anyway). The renderer writes them at
// http level.
var DefaultTLSProtocols = []string{"TLSv1.2", "TLSv1.3"}

// tlsGroup is a group ssl-ecdh-curve may name.
type tlsGroup struct {
	// name is the group's name as NGINX's $ssl_curve gives it, which
	// ssl_ecdh_curve also accepts; Gatewall writes it.
	name string
	// tls13 and tls12 say which protocols OpenSSL 3.0 negotiates it in
	// (TLS 1.2 uses elliptic curves only; TLS 1.3 the listed ones only).
	tls13, tls12 bool
}

// tlsGroups are the names ssl_ecdh_curve accepts (OpenSSL 3.0's
// SSL_CTX_set1_curves_list) of groups the data plane negotiates, as
// measured with NGINX 1.22 and Debian 12's OpenSSL 3.0
// (TestNginxNegotiatesTLSGroups): the curves under its security level 2
// (under 112 bits: secp160*, secp192k1, P-192, sect163*, sect193*) load,
// and are never negotiated.
var tlsGroups = map[string]tlsGroup{
	"X25519":          {"X25519", true, true},
	"x25519":          {"X25519", true, true},
	"X448":            {"X448", true, true},
	"x448":            {"X448", true, true},
	"P-256":           {"prime256v1", true, true},
	"prime256v1":      {"prime256v1", true, true},
	"P-384":           {"secp384r1", true, true},
	"secp384r1":       {"secp384r1", true, true},
	"P-521":           {"secp521r1", true, true},
	"secp521r1":       {"secp521r1", true, true},
	"ffdhe2048":       {"ffdhe2048", true, false},
	"ffdhe3072":       {"ffdhe3072", true, false},
	"ffdhe4096":       {"ffdhe4096", true, false},
	"ffdhe6144":       {"ffdhe6144", true, false},
	"ffdhe8192":       {"ffdhe8192", true, false},
	"P-224":           {"secp224r1", false, true},
	"secp224r1":       {"secp224r1", false, true},
	"secp224k1":       {"secp224k1", false, true},
	"secp256k1":       {"secp256k1", false, true},
	"sect233k1":       {"sect233k1", false, true},
	"sect233r1":       {"sect233r1", false, true},
	"sect239k1":       {"sect239k1", false, true},
	"sect283k1":       {"sect283k1", false, true},
	"sect283r1":       {"sect283r1", false, true},
	"sect409k1":       {"sect409k1", false, true},
	"sect409r1":       {"sect409r1", false, true},
	"sect571k1":       {"sect571k1", false, true},
	"sect571r1":       {"sect571r1", false, true},
	"brainpoolP256r1": {"brainpoolP256r1", false, true},
	"brainpoolP384r1": {"brainpoolP384r1", false, true},
	"brainpoolP512r1": {"brainpoolP512r1", false, true},
}

// weakTLSGroups are the groups OpenSSL loads and its security level 2
// never negotiates.
var weakTLSGroups = map[string]bool{"secp160k1": true, "secp160r1": true, "secp160r2": true, "secp192k1": true,
	"prime192v1": true, "P-192": true, "sect163k1": true, "sect163r1": true, "sect163r2": true, "sect193r1": true, "sect193r2": true}

// AutoTLSGroups are the groups of ssl_ecdh_curve auto (NGINX's default:
// OpenSSL 3.0's own list), by $ssl_curve name, in its order of preference.
var AutoTLSGroups = []string{"X25519", "prime256v1", "X448", "secp521r1", "secp384r1",
	"ffdhe2048", "ffdhe3072", "ffdhe4096", "ffdhe6144", "ffdhe8192"}

// Bounds of a listener's session cache and timeout.
const (
	// MinSSLSessionCache is NGINX's smallest shared zone: 8 pages.
	MinSSLSessionCache = 32 << 10
	// SSLSessionCacheBudget is what a Gateway's session caches may hold
	// together (docs/budgets.md); one listener's may take all of it.
	SSLSessionCacheBudget = 32 << 20
	// MaxSSLSessionTimeout is TLS 1.3's longest ticket lifetime (RFC 8446
	// 4.6.1), which OpenSSL caps its tickets at.
	MaxSSLSessionTimeout = 7 * 24 * 3600
)

// sslSessionTimeoutRE is an NGINX time in one unit, as ssl_session_timeout
// reads it (seconds; no ms, which NGINX refuses there, and no M or y).
var sslSessionTimeoutRE = regexp.MustCompile(`^([0-9]{1,7})([smhd]?)$`)

// TLSOptions are a listener's tls.options Gatewall reads, checked. Unset
// fields are NGINX's defaults (DefaultTLSProtocols for protocols).
type TLSOptions struct {
	// Protocols are the protocols, in TLSProtocols' order; nil: unset.
	Protocols []string
	// Ciphers is the cipher string; "": unset. SecLevel0 says it sets
	// OpenSSL's security level 0 (@SECLEVEL=0), which TLS 1.0 and 1.1 need.
	Ciphers   string
	SecLevel0 bool
	// PreferServerCiphers is "on", "off", or "".
	PreferServerCiphers string
	// Curves are the groups, by $ssl_curve name, in the order given; nil:
	// unset or auto (CurvesAuto).
	Curves     []string
	CurvesAuto bool
	// SessionCache is "off", "none", a size, or "" (NGINX's default,
	// none); SessionCacheBytes the size's bytes.
	SessionCache      string
	SessionCacheBytes int64
	// SessionTimeout is an NGINX time in seconds or one unit, or "" (NGINX's
	// 5m); SessionTimeoutSeconds its seconds.
	SessionTimeout        string
	SessionTimeoutSeconds int64
}

// DefaultSSLSessionTimeout is NGINX's ssl_session_timeout, in seconds.
const DefaultSSLSessionTimeout = 300

// EffectiveProtocols are the protocols the listener allows.
func (o TLSOptions) EffectiveProtocols() []string {
	if o.Protocols == nil {
		return DefaultTLSProtocols
	}
	return o.Protocols
}

// EffectiveCurves are the groups the listener allows, by $ssl_curve name.
func (o TLSOptions) EffectiveCurves() []string {
	if o.Curves == nil {
		return AutoTLSGroups
	}
	return o.Curves
}

// EffectiveSessionTimeout is the listener's session timeout in seconds.
func (o TLSOptions) EffectiveSessionTimeout() int64 {
	if o.SessionTimeout == "" {
		return DefaultSSLSessionTimeout
	}
	return o.SessionTimeoutSeconds
}

// ParseTLSOptions reads a listener's tls.options: the keys Gatewall reads,
// checked, the other keys (sorted), and one error per key whose value is
// refused, naming the key.
func ParseTLSOptions(options map[string]string) (TLSOptions, []string, []error) {
	var o TLSOptions
	var unknown []string
	var errs []error
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fail := func(key, value string, err error) {
		errs = append(errs, fmt.Errorf("tls.options[%s] %s: %w", key, quoteShort(value), err))
	}
	for _, k := range keys {
		v := options[k]
		if !slices.Contains(TLSOptionKeys, k) {
			unknown = append(unknown, k)
			continue
		}
		if err := syntax.CheckToken("the value", v); err != nil {
			fail(k, v, err)
			continue
		}
		var err error
		switch k {
		case TLSOptionProtocols:
			o.Protocols, err = parseTLSProtocols(v)
		case TLSOptionCiphers:
			var list CipherList
			if list, err = CipherString(v); err == nil {
				o.Ciphers, o.SecLevel0 = v, list.SecLevel == 0
			}
		case TLSOptionPreferServerCiphers:
			if v != "on" && v != "off" {
				err = fmt.Errorf(`must be "on" or "off"`)
			}
			o.PreferServerCiphers = v
		case TLSOptionSessionCache:
			o.SessionCache, o.SessionCacheBytes, err = ParseSSLSessionCache(v)
		case TLSOptionSessionTimeout:
			o.SessionTimeoutSeconds, err = ParseSSLSessionTimeout(v)
			o.SessionTimeout = v
		case TLSOptionECDHCurve:
			o.Curves, o.CurvesAuto, err = ParseTLSGroups(v)
		}
		if err != nil {
			fail(k, v, err)
		}
	}
	errs = append(errs, o.checkCombination(options)...)
	return o, unknown, errs
}

// checkCombination refuses options that are valid alone and leave a
// listener that cannot complete the handshakes they ask for.
func (o TLSOptions) checkCombination(options map[string]string) []error {
	var errs []error
	old := slices.Contains(o.Protocols, "TLSv1") || slices.Contains(o.Protocols, "TLSv1.1")
	if old && !o.SecLevel0 {
		errs = append(errs, fmt.Errorf("tls.options[%s] %s: TLSv1 and TLSv1.1 need OpenSSL's security level 0, and the data plane's OpenSSL 3.0 runs at level 2, where no TLS 1.0 or 1.1 handshake succeeds: add :@SECLEVEL=0 to %s as well",
			TLSOptionProtocols, quoteShort(options[TLSOptionProtocols]), TLSOptionCiphers))
	}
	if o.Curves != nil {
		protocols := o.EffectiveProtocols()
		tls13 := slices.Contains(protocols, "TLSv1.3")
		tls12 := slices.ContainsFunc(protocols, func(p string) bool { return p != "TLSv1.3" })
		has13 := slices.ContainsFunc(o.Curves, func(c string) bool { return tlsGroupByName(c).tls13 })
		has12 := slices.ContainsFunc(o.Curves, func(c string) bool { return tlsGroupByName(c).tls12 })
		switch {
		case tls13 && !has13:
			errs = append(errs, fmt.Errorf("tls.options[%s] %s: no group of the list is negotiated in TLS 1.3, which the listener allows (X25519, P-256, P-384, P-521, X448 and the ffdhe groups are)",
				TLSOptionECDHCurve, quoteShort(options[TLSOptionECDHCurve])))
		case tls12 && !has12:
			errs = append(errs, fmt.Errorf("tls.options[%s] %s: no group of the list is negotiated in TLS 1.2, which the listener allows (the ffdhe groups are TLS 1.3's)",
				TLSOptionECDHCurve, quoteShort(options[TLSOptionECDHCurve])))
		}
	}
	return errs
}

// tlsGroupByName finds a group by its $ssl_curve name.
func tlsGroupByName(name string) tlsGroup {
	return tlsGroups[name]
}

func parseTLSProtocols(v string) ([]string, error) {
	words := strings.Fields(v)
	if len(words) == 0 {
		return nil, fmt.Errorf("names no protocol; use TLSv1.2, TLSv1.3 (TLSv1 and TLSv1.1 with @SECLEVEL=0 in the ciphers)")
	}
	seen := map[string]bool{}
	for _, w := range words {
		switch {
		case w == "SSLv2" || w == "SSLv3":
			return nil, fmt.Errorf("%s is not in the data plane's OpenSSL 3.0 (Debian builds it without SSL 2 and 3); use TLSv1.2, TLSv1.3", w)
		case !slices.Contains(TLSProtocols, w):
			return nil, fmt.Errorf("%s is not a protocol; use TLSv1, TLSv1.1, TLSv1.2 or TLSv1.3", quoteShort(w))
		}
		seen[w] = true
	}
	var out []string
	for _, p := range TLSProtocols {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// ParseTLSGroups reads an ssl-ecdh-curve value: auto, or groups by their
// $ssl_curve names, each once.
func ParseTLSGroups(v string) ([]string, bool, error) {
	if v == "auto" {
		return nil, true, nil
	}
	var out []string
	for _, name := range strings.Split(v, ":") {
		g, ok := tlsGroups[name]
		switch {
		case name == "":
			return nil, false, fmt.Errorf("has an empty element (separate groups with one ':')")
		case name == "auto":
			return nil, false, fmt.Errorf("auto stands alone: it is OpenSSL's own list")
		case weakTLSGroups[name]:
			return nil, false, fmt.Errorf("%s is under the data plane's OpenSSL security level 2 (112 bits): it would never be negotiated", name)
		case !ok:
			return nil, false, fmt.Errorf("%s is not a group OpenSSL 3.0 negotiates on the data plane (X25519, X448, P-256, P-384, P-521, ffdhe2048 to ffdhe8192, and for TLS 1.2 P-224, secp256k1, the sect and brainpool r1 curves)", quoteShort(name))
		case slices.Contains(out, g.name):
			return nil, false, fmt.Errorf("names %s twice (OpenSSL refuses a list with a group twice)", g.name)
		}
		out = append(out, g.name)
	}
	return out, false, nil
}

// ParseSSLSessionCache reads an ssl-session-cache value: off, none, or a
// shared cache's size (its bytes).
func ParseSSLSessionCache(v string) (string, int64, error) {
	if v == "off" || v == "none" {
		return v, 0, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return "", 0, fmt.Errorf(`must be "off", "none" or a size (the shared cache's, such as 10m): %w`, err)
	}
	if n < MinSSLSessionCache || n > SSLSessionCacheBudget {
		return "", 0, fmt.Errorf("must be from 32k (NGINX's smallest shared zone) to 32m (what a Gateway's session caches may hold together)")
	}
	return v, n, nil
}

// ParseSSLSessionTimeout reads an ssl-session-timeout value, in seconds.
func ParseSSLSessionTimeout(v string) (int64, error) {
	m := sslSessionTimeoutRE.FindStringSubmatch(v)
	if m == nil {
		return 0, fmt.Errorf("must be an NGINX time in one unit: seconds, or a number with s, m, h or d (NGINX refuses ms here)")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	n *= map[string]int64{"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]
	if n < 1 || n > MaxSSLSessionTimeout {
		return 0, fmt.Errorf("must be from 1s to 7d (TLS 1.3's longest session ticket lifetime)")
	}
	return n, nil
}
