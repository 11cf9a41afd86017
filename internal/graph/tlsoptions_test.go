package graph

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/validation"
)

// optionsListener is an HTTPS listener with the certificate "cert" and
// tls.options.
func optionsListener(name string, port gatewayv1.PortNumber, hostname string, options map[string]string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}}}}
	if hostname != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(hostname))
	}
	if options != nil {
		l.TLS.Options = map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{}
		for k, v := range options {
			l.TLS.Options[gatewayv1.AnnotationKey(k)] = gatewayv1.AnnotationValue(v)
		}
	}
	return l
}

// optionsGateway builds budgetInput's Gateway (room for every socket) with
// the listeners, the certificate Secret "cert", and objs (ListenerSets).
func optionsGateway(t *testing.T, listeners []gatewayv1.Listener, objs ...any) *Gateway {
	t.Helper()
	m := newCertMaterial(t)
	g := buildTest(t, budgetInput(100, listeners, append(objs, tlsSecret("cert", m.goodCert, m.goodKey))...))
	if !g.Valid {
		t.Fatalf("the Gateway is not accepted: %+v", g.Conditions)
	}
	return g
}

func accepted(l *Listener) metav1.Condition {
	for _, c := range l.Conditions {
		if c.Type == string(gatewayv1.ListenerConditionAccepted) {
			return c
		}
	}
	return metav1.Condition{}
}

// TestTLSOptionsOnListeners: NGF's keys are read (its https-termination
// example's, field for field); a key Gatewall does not read is named in
// the listener's Accepted message and the listener serves; a known key
// with a value NGINX or its OpenSSL would not take refuses the listener
// alone, on the Gateway as on a ListenerSet.
func TestTLSOptionsOnListeners(t *testing.T) {
	ngf := map[string]string{
		validation.TLSOptionProtocols:           "TLSv1.2 TLSv1.3",
		validation.TLSOptionCiphers:             "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:HIGH:!aNULL:!MD5",
		validation.TLSOptionPreferServerCiphers: "on",
	}
	set := listenerSetAt("team", "set", 10,
		gatewayv1.ListenerEntry(optionsListener("typo", 9443, "typo.example.com", map[string]string{"nginx.org/ssl-protocol": "TLSv1.3"})),
		gatewayv1.ListenerEntry(optionsListener("bad", 9443, "bad.example.com", map[string]string{validation.TLSOptionECDHCurve: "P-256:prime256v1"})))
	set.Spec.Listeners[0].TLS.CertificateRefs[0].Namespace = ptr.To[gatewayv1.Namespace]("ns")
	set.Spec.Listeners[1].TLS.CertificateRefs[0].Namespace = ptr.To[gatewayv1.Namespace]("ns")
	grant := &gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "certs"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "ListenerSet", Namespace: "team"}},
		To:   []gatewayv1.ReferenceGrantTo{{Kind: "Secret"}}}}
	g := optionsGateway(t, []gatewayv1.Listener{
		optionsListener("ngf", 443, "", ngf),
		optionsListener("other", 443, "other.example.com", map[string]string{"example.com/min-version": "1.3"}),
		optionsListener("sslv3", 8443, "", map[string]string{validation.TLSOptionProtocols: "SSLv3 TLSv1.2"}),
	}, set, grant)

	ngfL, other, sslv3 := g.Listeners[0], g.Listeners[1], g.Listeners[2]
	if !ngfL.Valid || !reflect.DeepEqual(ngfL.TLSOptions.Protocols, []string{"TLSv1.2", "TLSv1.3"}) || ngfL.TLSOptions.PreferServerCiphers != "on" ||
		ngfL.TLSOptions.Ciphers != ngf[validation.TLSOptionCiphers] {
		t.Errorf("NGF's example listener: valid %v, options %+v, %+v", ngfL.Valid, ngfL.TLSOptions, accepted(ngfL))
	}
	if c := accepted(other); !other.Valid || c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, `tls.options "example.com/min-version": not read by Gatewall, which reads nginx.org/ssl-ciphers,`) {
		t.Errorf("a key Gatewall does not read: valid %v, %+v", other.Valid, c)
	}
	if c := accepted(sslv3); sslv3.Valid || sslv3.Attachable || c.Reason != string(gatewayv1.ListenerReasonUnsupportedValue) ||
		!strings.Contains(c.Message, `tls.options[nginx.org/ssl-protocols] "SSLv3 TLSv1.2": SSLv3 is not in the data plane's OpenSSL 3.0`) {
		t.Errorf("an invalid value: valid %v, %+v", sslv3.Valid, c)
	}
	if len(g.ListenerSets) != 1 || !g.ListenerSets[0].Accepted {
		t.Fatalf("the ListenerSet with one valid listener is not accepted: %+v", g.ListenerSets)
	}
	typo, bad := g.ListenerSets[0].Listeners[0], g.ListenerSets[0].Listeners[1]
	if c := accepted(typo); !typo.Valid || !strings.Contains(c.Message, `tls.options "nginx.org/ssl-protocol": not read`) {
		t.Errorf("the ListenerSet's listener with a typo: valid %v, %+v", typo.Valid, c)
	}
	if c := accepted(bad); bad.Valid || !strings.Contains(c.Message, "names prime256v1 twice") {
		t.Errorf("the ListenerSet's listener with a curve twice: valid %v, %+v", bad.Valid, c)
	}
}

// TestPortHandshakes: the default server of an HTTPS port negotiates the
// union of its listeners' protocols and groups; a listener alone is held
// to its own in the handshake, one allowing less than its port after it
// (and told so).
func TestPortHandshakes(t *testing.T) {
	tls13 := map[string]string{validation.TLSOptionProtocols: "TLSv1.3"}
	old := map[string]string{validation.TLSOptionProtocols: "TLSv1 TLSv1.2", validation.TLSOptionCiphers: "DEFAULT:@SECLEVEL=0"}
	g := optionsGateway(t, []gatewayv1.Listener{
		optionsListener("alone", 8443, "alone.example.com", tls13),
		optionsListener("default", 443, "", nil),
		optionsListener("strict", 443, "strict.example.com", tls13),
		optionsListener("p384", 443, "p384.example.com", map[string]string{validation.TLSOptionECDHCurve: "P-384"}),
		optionsListener("old", 9443, "old.example.com", old),
		optionsListener("modern", 9443, "modern.example.com", nil),
		optionsListener("x25519", 7443, "x.example.com", map[string]string{validation.TLSOptionECDHCurve: "X25519"}),
		optionsListener("k1", 7443, "k1.example.com", map[string]string{validation.TLSOptionECDHCurve: "P-384:secp256k1"}),
	})
	byName := map[string]*Listener{}
	for _, l := range g.Listeners {
		if !l.Valid {
			t.Fatalf("listener %s is not valid: %+v", l.Name, l.Conditions)
		}
		byName[l.Name] = l
	}
	if h := g.Handshake(8443); !reflect.DeepEqual(h.Protocols, []string{"TLSv1.3"}) || byName["alone"].CheckProtocols != nil ||
		strings.Contains(accepted(byName["alone"]).Message, "421") {
		t.Errorf("a listener alone on its port: %+v, checked %v, %q", h, byName["alone"].CheckProtocols, accepted(byName["alone"]).Message)
	}
	h := g.Handshake(443)
	if !reflect.DeepEqual(h.Protocols, []string{"TLSv1.2", "TLSv1.3"}) {
		t.Errorf("port 443's protocols %v", h.Protocols)
	}
	if !reflect.DeepEqual(byName["strict"].CheckProtocols, []string{"TLSv1.3"}) ||
		!strings.Contains(accepted(byName["strict"]).Message, "NGINX 1.22 negotiates the TLS protocol once for all HTTPS listeners of port 443") {
		t.Errorf("strict: checked %v, %q", byName["strict"].CheckProtocols, accepted(byName["strict"]).Message)
	}
	if byName["default"].CheckProtocols != nil || byName["default"].CheckCurves != nil || byName["p384"].CheckProtocols != nil {
		t.Errorf("listeners allowing the port's protocols and groups are checked: %v %v %v",
			byName["default"].CheckProtocols, byName["default"].CheckCurves, byName["p384"].CheckProtocols)
	}
	if !reflect.DeepEqual(byName["p384"].CheckCurves, []string{"secp384r1"}) || h.Curves != nil ||
		!strings.Contains(accepted(byName["p384"]).Message, "a request to this listener over a group other than secp384r1 is answered 421") {
		t.Errorf("p384: port's groups %v (want auto: the union is its list), checked %v, %q", h.Curves, byName["p384"].CheckCurves, accepted(byName["p384"]).Message)
	}
	if h := g.Handshake(7443); !reflect.DeepEqual(h.Curves, []string{"X25519", "secp384r1", "secp256k1"}) ||
		!reflect.DeepEqual(byName["x25519"].CheckCurves, []string{"X25519"}) || !reflect.DeepEqual(byName["k1"].CheckCurves, []string{"secp384r1", "secp256k1"}) {
		t.Errorf("port 7443's groups %v, checks %v and %v", h.Curves, byName["x25519"].CheckCurves, byName["k1"].CheckCurves)
	}
	if h := g.Handshake(9443); !reflect.DeepEqual(h.Protocols, []string{"TLSv1", "TLSv1.2", "TLSv1.3"}) {
		t.Errorf("port 9443: %+v", h)
	}
	// Each allows less than the port: checked after the handshake (modern's
	// TLS 1.0 handshakes fail at level 2 when they select its server).
	if !reflect.DeepEqual(byName["old"].CheckProtocols, []string{"TLSv1", "TLSv1.2"}) ||
		!reflect.DeepEqual(byName["modern"].CheckProtocols, []string{"TLSv1.2", "TLSv1.3"}) {
		t.Errorf("port 9443's checks: old %v, modern %v", byName["old"].CheckProtocols, byName["modern"].CheckProtocols)
	}
}

// TestSessionSettingsPerPort: a port keeps one session cache (the largest
// asked) and timeout (the shortest); listeners asking otherwise are told.
// The caches are a budget of the Gateway, spent in precedence order: the
// listener that would cross it is refused, alone.
func TestSessionSettingsPerPort(t *testing.T) {
	set := listenerSetAt("ns", "set", 10,
		gatewayv1.ListenerEntry(optionsListener("big", 8443, "big.example.com", map[string]string{validation.TLSOptionSessionCache: "20m"})),
		gatewayv1.ListenerEntry(optionsListener("shares", 443, "shares.example.com", map[string]string{validation.TLSOptionSessionCache: "4m"})))
	g := optionsGateway(t, []gatewayv1.Listener{
		optionsListener("cache", 443, "", map[string]string{validation.TLSOptionSessionCache: "20m", validation.TLSOptionSessionTimeout: "1h"}),
		optionsListener("off", 443, "off.example.com", map[string]string{validation.TLSOptionSessionCache: "off"}),
		optionsListener("fits", 8443, "fits.example.com", map[string]string{validation.TLSOptionSessionCache: "12m"}),
	}, set)
	h := g.Handshake(443)
	if h.SessionCache != "20m" || h.SessionTimeout != "" {
		t.Errorf("port 443's sessions: cache %q, timeout %q; want 20m and NGINX's 5m (off.example.com asks none)", h.SessionCache, h.SessionTimeout)
	}
	if m := accepted(g.Listeners[0]).Message; !strings.Contains(m, "TLS sessions on port 443 are resumed for 300s at most") {
		t.Errorf("the listener asking 1h is not told: %q", m)
	}
	if m := accepted(g.Listeners[1]).Message; !strings.Contains(m, "the TLS session cache of port 443 is 20m") {
		t.Errorf("the listener asking off is not told: %q", m)
	}
	big, shares := g.ListenerSets[0].Listeners[0], g.ListenerSets[0].Listeners[1]
	if c := accepted(big); big.Valid || !strings.Contains(c.Message, "may hold 32 MiB together") || !strings.Contains(c.Message, "hold 32 MiB of it") {
		t.Errorf("20m more on port 8443 (20m + 12m held): valid %v, %+v", big.Valid, c)
	}
	if !shares.Valid || !g.Listeners[2].Valid {
		t.Errorf("a cache within its port's (4m on 443's 20m) or the budget is refused: %+v %+v", accepted(shares), accepted(g.Listeners[2]))
	}
}
