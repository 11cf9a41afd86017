package config_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// tlsListener is an HTTPS listener of the test Gateway with the
// certificate "cert" (for *.example.com) and tls.options.
func tlsListener(name string, port int32, hostname string, options map[string]string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: gatewayv1.PortNumber(port), Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}}}}
	if hostname != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(hostname))
	}
	if len(options) > 0 {
		l.TLS.Options = map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{}
		for k, v := range options {
			l.TLS.Options[gatewayv1.AnnotationKey(k)] = gatewayv1.AnnotationValue(v)
		}
	}
	return l
}

// tlsInput is httpInput's Gateway with the listeners, the certificate
// Secret "cert" for *.example.com and *.a.example.com, and a route to app for each listener
// (attached by section name, for its hostname or any). It returns the
// CA's pool, for clients.
func tlsInput(t *testing.T, listeners ...gatewayv1.Listener) (*graph.Input, *x509.CertPool) {
	t.Helper()
	ca, err := issuer.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.IssueServing("example", nil, []string{"*.example.com", "example.com", "*.a.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	in := httpInput()
	gw := in.Gateways[testGateway]
	gw.Spec.Listeners = append(gw.Spec.Listeners, listeners...)
	in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cert"}, Data: map[string][]byte{
		corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM,
	}})
	for _, l := range listeners {
		r := httpRoute("r-"+string(l.Name), nil, gatewayv1.HTTPRouteRule{})
		r.Spec.ParentRefs[0].SectionName = ptr.To(l.Name)
		in.Add(r)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	return in, pool
}

// tlsGet sends GET / for host over TLS to port in NGINX's namespace with
// the client's TLS settings (server name: host), on a new connection,
// and returns the status and body, or the handshake's error.
func tlsGet(s *nginxtest.Server, port int, host string, pool *x509.CertPool, client *tls.Config) (int, string, error) {
	return tlsGetWithSNI(s, port, host, host, pool, client)
}

// tlsGetWithSNI is tlsGet on a connection whose server name is sni.
func tlsGetWithSNI(s *nginxtest.Server, port int, sni, host string, pool *x509.CertPool, client *tls.Config) (int, string, error) {
	cfg := client.Clone()
	cfg.RootCAs, cfg.ServerName = pool, sni
	c := &http.Client{Transport: &http.Transport{
		DialTLSContext: func(context.Context, string, string) (net.Conn, error) {
			raw, err := s.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				return nil, err
			}
			conn := tls.Client(raw, cfg)
			if err := conn.Handshake(); err != nil {
				raw.Close()
				return nil, err
			}
			return conn, nil
		},
		DisableKeepAlives: true,
	}}
	resp, err := c.Get(fmt.Sprintf("https://%s:%d/", host, port))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

// TestTLS13OnHTTPSListeners: a listener without tls.options speaks TLS 1.3
// (NGINX 1.22's own default, TLSv1 TLSv1.1 TLSv1.2, left it off) and
// TLS 1.2, and nothing older.
func TestTLS13OnHTTPSListeners(t *testing.T) {
	in, pool := tlsInput(t, tlsListener("https", 443, "", nil))
	cfg := build(t, in)
	s := serve(t, cfg)
	if err := s.SetEndpoints(cfg.Endpoints()); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		version uint16
		served  bool
	}{{tls.VersionTLS13, true}, {tls.VersionTLS12, true}, {tls.VersionTLS11, false}, {tls.VersionTLS10, false}} {
		code, body, err := tlsGet(s, 443, "a.example.com", pool, &tls.Config{MinVersion: v.version, MaxVersion: v.version})
		if served := err == nil && code == http.StatusOK && body == "backend"; served != v.served {
			t.Errorf("%s: %d %q %v; want served: %v", tls.VersionName(v.version), code, body, err, v.served)
		}
	}
}

// TestTLS13OnTerminatingTLSListeners: a TLS listener in mode Terminate
// (the stream module terminates TLS, then passes the bytes to a TLSRoute's
// backend) speaks TLS 1.3 and 1.2 too.
func TestTLS13OnTerminatingTLSListeners(t *testing.T) {
	in, pool := termInput(t)
	cfg := build(t, in)
	s := serve(t, cfg)
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		code, body, err := tlsGet(s, 8443, "a.example.com", pool, &tls.Config{MinVersion: v, MaxVersion: v})
		if err != nil || code != http.StatusOK || body != "backend" {
			t.Errorf("%s: %d %q %v", tls.VersionName(v), code, body, err)
		}
	}
}

// TestTLSOptionsOnTerminatingTLSListeners: a TLS listener in mode
// Terminate has a stream server of its own: its options hold in the
// handshake.
func TestTLSOptionsOnTerminatingTLSListeners(t *testing.T) {
	in, pool := termInput(t)
	term := &in.Gateways[testGateway].Spec.Listeners[len(in.Gateways[testGateway].Spec.Listeners)-1]
	term.TLS.Options = map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"nginx.org/ssl-protocols": "TLSv1.3", "nginx.org/ssl-session-cache": "1m"}
	cfg := build(t, in)
	s := serve(t, cfg)
	if _, _, err := tlsGet(s, 8443, "a.example.com", pool, &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12}); err == nil {
		t.Errorf("TLS 1.2 to a TLS 1.3 listener in mode Terminate completed its handshake")
	}
	if code, body, err := tlsGet(s, 8443, "a.example.com", pool, &tls.Config{MinVersion: tls.VersionTLS13}); err != nil || code != http.StatusOK || body != "backend" {
		t.Errorf("TLS 1.3: %d %q %v", code, body, err)
	}
}

// termInput is tlsInput's Gateway with a TLS listener "term" on port 8443
// in mode Terminate, and a TLSRoute for a.example.com to app.
func termInput(t *testing.T) (*graph.Input, *x509.CertPool) {
	in, pool := tlsInput(t)
	gw := in.Gateways[testGateway]
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "term", Port: 8443, Protocol: gatewayv1.TLSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate), CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}}}})
	in.Add(&gatewayv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "term"},
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To[gatewayv1.SectionName]("term")}}},
			Hostnames:       []gatewayv1.Hostname{"a.example.com"},
			Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{appRef[0].BackendRef}}},
		},
	})
	return in, pool
}

// opensslGet sends GET / for host with openssl s_client (which speaks
// TLS 1.0 and the groups Go does not) to port in NGINX's namespace, and
// returns what it printed: the response, and the session's details.
func opensslGet(s *nginxtest.Server, port int, host string, args ...string) string {
	cmd := s.Command("openssl", append([]string{"s_client", "-connect", fmt.Sprintf("127.0.0.1:%d", port), "-servername", host, "-ign_eof"}, args...)...)
	cmd.Stdin = strings.NewReader("GET / HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestTLSOptionsServed: real NGINX holds each listener to its tls.options:
// in the handshake where the listener is alone on its port or the option
// is the selected server's (ciphers); after the handshake, with 421, where
// its port's handshake allows more for another listener.
func TestTLSOptionsServed(t *testing.T) {
	const (
		p256 = tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
		p384 = tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
	)
	tls13 := map[string]string{"nginx.org/ssl-protocols": "TLSv1.3"}
	old := map[string]string{"nginx.org/ssl-protocols": "TLSv1 TLSv1.2 TLSv1.3", "nginx.org/ssl-ciphers": "DEFAULT:@SECLEVEL=0"}
	in, pool := tlsInput(t,
		tlsListener("alone13", 8443, "", tls13),
		tlsListener("default", 443, "", nil),
		tlsListener("shared13", 443, "s13.example.com", tls13),
		tlsListener("ciphers", 443, "c.example.com", map[string]string{"nginx.org/ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384", "nginx.org/ssl-prefer-server-ciphers": "on"}),
		tlsListener("p384", 443, "p.example.com", map[string]string{"nginx.org/ssl-ecdh-curve": "P-384"}),
		tlsListener("alone384", 9443, "", map[string]string{"nginx.org/ssl-ecdh-curve": "secp384r1"}),
		tlsListener("old", 7443, "old.example.com", old),
		tlsListener("modern", 7443, "modern.example.com", nil),
		tlsListener("sessions", 6443, "", map[string]string{"nginx.org/ssl-session-cache": "1m", "nginx.org/ssl-session-timeout": "1h"}),
	)
	cfg := build(t, in)
	s := serve(t, cfg)
	if err := s.SetEndpoints(cfg.Endpoints()); err != nil {
		t.Fatal(err)
	}
	type outcome int
	const (
		served outcome = iota
		misdirected
		refused // at the handshake
	)
	check := func(what string, port int, host string, client *tls.Config, want outcome) {
		t.Helper()
		code, body, err := tlsGet(s, port, host, pool, client)
		got := refused
		switch {
		case err == nil && code == http.StatusOK && body == "backend":
			got = served
		case err == nil && code == http.StatusMisdirectedRequest:
			got = misdirected
		case err == nil:
			t.Errorf("%s: %d %q", what, code, body)
			return
		}
		if got != want {
			t.Errorf("%s: %d %q %v; want outcome %d (0 served, 1 421, 2 refused at the handshake)", what, code, body, err, want)
		}
	}
	v12 := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12}
	v13 := &tls.Config{MinVersion: tls.VersionTLS13}
	check("TLS 1.2 to a TLS 1.3 listener alone on its port", 8443, "a.example.com", v12, refused)
	check("TLS 1.3 to a TLS 1.3 listener alone on its port", 8443, "a.example.com", v13, served)
	check("TLS 1.2 to a TLS 1.3 listener sharing its port", 443, "s13.example.com", v12, misdirected)
	check("TLS 1.3 to a TLS 1.3 listener sharing its port", 443, "s13.example.com", v13, served)
	check("TLS 1.2 to the default listener beside it", 443, "a.example.com", v12, served)

	only := func(suite uint16) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}
	}
	check("a TLS 1.2 cipher outside the listener's", 443, "c.example.com", only(p256), refused)
	check("the listener's TLS 1.2 cipher", 443, "c.example.com", only(p384), served)
	check("that cipher to the default listener of the port", 443, "a.example.com", only(p256), served)

	group := func(c tls.CurveID) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS13, CurvePreferences: []tls.CurveID{c}}
	}
	check("X25519 to a P-384 listener alone on its port", 9443, "a.example.com", group(tls.X25519), refused)
	check("P-384 to a P-384 listener alone on its port", 9443, "a.example.com", group(tls.CurveP384), served)
	check("X25519 to a P-384 listener sharing its port", 443, "p.example.com", group(tls.X25519), misdirected)
	check("P-384 to a P-384 listener sharing its port", 443, "p.example.com", group(tls.CurveP384), served)
	check("X25519 to the default listener beside it", 443, "a.example.com", group(tls.X25519), served)

	// TLS 1.0: the listener asking for it (with @SECLEVEL=0) gets it; the
	// one beside it at level 2 fails the handshake after the server name.
	if out := opensslGet(s, 7443, "old.example.com", "-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"); !strings.Contains(out, "backend") {
		t.Errorf("TLS 1.0 to the listener allowing it:\n%s", out)
	}
	if out := opensslGet(s, 7443, "modern.example.com", "-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"); strings.Contains(out, "backend") || strings.Contains(out, "421") {
		t.Errorf("TLS 1.0 to the listener at level 2 beside it completed its handshake:\n%s", out)
	}
	if out := opensslGet(s, 6443, "a.example.com", "-tls1_2"); !strings.Contains(out, "TLS session ticket lifetime hint: 3600 (seconds)") {
		t.Errorf("the session timeout of 1h is not the tickets' lifetime:\n%s", out)
	}
}

// TestListenerCiphersWhateverTheServerName: a listener's ciphers hold for
// every server name of the listener, also one no route names, where NGINX
// would pick another listener's wildcard server for the handshake: a
// client whose certificate check passes for both (one certificate for
// every name, as connection coalescing needs) then reached the listener's
// routes over a cipher the listener refuses.
func TestListenerCiphersWhateverTheServerName(t *testing.T) {
	in, pool := tlsInput(t,
		tlsListener("wide", 443, "*.example.com", nil),
		tlsListener("narrow", 443, "*.a.example.com", map[string]string{"nginx.org/ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384"}),
	)
	r := in.Route("HTTPRoute", types.NamespacedName{Namespace: "ns", Name: "r-narrow"}).(*gatewayv1.HTTPRoute)
	r.Spec.Hostnames = []gatewayv1.Hostname{"y.a.example.com"}
	cfg := build(t, in)
	s := serve(t, cfg)
	if err := s.SetEndpoints(cfg.Endpoints()); err != nil {
		t.Fatal(err)
	}
	// One certificate names both: a verifying client may send a request
	// for y.a.example.com on a connection opened for x.a.example.com.
	outside := &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		RootCAs: pool, ServerName: "x.a.example.com", NextProtos: []string{"http/1.1"}}
	raw, err := s.Dial("tcp", "127.0.0.1:443")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	c := tls.Client(raw, outside)
	if err := c.Handshake(); err == nil {
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: y.a.example.com\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		t.Errorf("a handshake for x.a.example.com with a cipher *.a.example.com's listener refuses completed; y.a.example.com's route answered %v %v", resp, err)
	}
	if code, body, err := tlsGet(s, 443, "y.a.example.com", pool, &tls.Config{MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}); err != nil || code != http.StatusOK || body != "backend" {
		t.Errorf("the listener's own cipher: %d %q %v", code, body, err)
	}
}
