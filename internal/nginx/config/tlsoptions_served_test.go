package config_test

import (
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
// Secret "cert" for *.example.com, and a route to app for each listener
// (attached by section name, for its hostname or any). It returns the
// CA's pool, for clients.
func tlsInput(t *testing.T, listeners ...gatewayv1.Listener) (*graph.Input, *x509.CertPool) {
	t.Helper()
	ca, err := issuer.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.IssueServing("example", nil, []string{"*.example.com", "example.com"})
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
	cfg := client.Clone()
	cfg.RootCAs, cfg.ServerName = pool, host
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
