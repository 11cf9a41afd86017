package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestTLSRoutePassthrough: on one port, a TLS listener in Passthrough mode,
// a TLS listener in Terminate mode and an HTTPS listener. A connection whose
// SNI a TLSRoute of the passthrough listener claims reaches that route's
// backend untouched: the backend's own certificate is presented and the
// backend sees the client's SNI. A connection for the Terminate listener's
// hostname is terminated by NGINX with that listener's certificate and its
// bytes passed on as they are to the TLSRoute's plain backend. A connection
// for the HTTPS listener's hostname is terminated by NGINX with the
// listener's certificate, and the HTTP backend sees the client's address as
// on any listener. A name no route claims (even one the passthrough
// listener's wildcard matches) and a name no listener has are refused at the
// handshake.
func TestTLSRoutePassthrough(t *testing.T) {
	ns := namespace(t, "e2e-tlsroute")
	gatewayClass(t)
	certA := selfSigned(t, "a.pass.example.com")
	certB := selfSigned(t, "b.pass.example.com")
	certWeb := selfSigned(t, "web.example.com")
	certTerm := selfSigned(t, "term.example.com")
	create(t, certA.secret(ns, "a-cert"), certB.secret(ns, "b-cert"), certWeb.secret(ns, "web-cert"), certTerm.secret(ns, "term-cert"))
	create(t, tlsEcho(ns, "echo-a", "a-cert")...)
	create(t, tlsEcho(ns, "echo-b", "b-cert")...)
	create(t, echo(ns, "web", 1)...)
	create(t,
		passthroughGateway(ns, "gw", "web-cert", "term-cert"),
		tlsRoute(ns, "a", "gw", "a.pass.example.com", "echo-a", 443),
		tlsRoute(ns, "b", "gw", "b.pass.example.com", "echo-b", 443),
		tlsRoute(ns, "term", "gw", "term.example.com", "web", 8080),
		httpRoute(ns, "web", "gw", "web.example.com", "/", "web"),
	)
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	for _, name := range []string{"a", "b", "term"} {
		key := types.NamespacedName{Namespace: ns, Name: name}
		eventually(t, 60*time.Second, func() error { return tlsRouteReady(key, "gw") })
	}

	t.Run("a.pass.example.com passes through to backend A", func(t *testing.T) {
		eventually(t, 60*time.Second, func() error { return passesThrough(addr, certA, ns, "echo-a") })
	})
	t.Run("b.pass.example.com passes through to backend B", func(t *testing.T) {
		eventually(t, 60*time.Second, func() error { return passesThrough(addr, certB, ns, "echo-b") })
	})
	t.Run("term.example.com is terminated and passed on as it is", func(t *testing.T) {
		eventually(t, 60*time.Second, func() error { return terminatedAsIs(addr, certTerm, ns, "web") })
	})
	t.Run("web.example.com is terminated and keeps the client's address", func(t *testing.T) {
		eventually(t, 60*time.Second, func() error { return terminates(addr, certWeb, ns, "web") })
	})
	// Checked once, after the routes above are served: the configuration
	// that serves them is the one that must refuse these names, and waiting
	// for a refusal would pass on a connection refused before NGINX was ready.
	t.Run("names no route claims are refused at the handshake", func(t *testing.T) {
		for _, host := range []string{"c.pass.example.com", "other.example.com"} {
			if err := refused(addr, host, certA, certB, certWeb, certTerm); err != nil {
				t.Error(err)
			}
		}
	})
}

// passthroughGateway has, on port 443, the listener "pass" (TLS,
// Passthrough, *.pass.example.com, TLSRoutes only), the listener "term"
// (TLS, Terminate with the Secret termCert, term.example.com) and the
// listener "web" (HTTPS for web.example.com, terminated with the Secret webCert).
func passthroughGateway(ns, name, webCert, termCert string) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx", Listeners: []gatewayv1.Listener{
			{
				Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
				Hostname:      ptr.To(gatewayv1.Hostname("*.pass.example.com")),
				TLS:           &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)},
				AllowedRoutes: &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "TLSRoute"}}},
			},
			{
				Name: "term", Port: 443, Protocol: gatewayv1.TLSProtocolType,
				Hostname: ptr.To(gatewayv1.Hostname("term.example.com")),
				TLS: &gatewayv1.ListenerTLSConfig{
					Mode:            ptr.To(gatewayv1.TLSModeTerminate),
					CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(termCert)}},
				},
			},
			{
				Name: "web", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
				Hostname: ptr.To(gatewayv1.Hostname("web.example.com")),
				TLS: &gatewayv1.ListenerTLSConfig{
					Mode:            ptr.To(gatewayv1.TLSModeTerminate),
					CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(webCert)}},
				},
			},
		}},
	}
}

// tlsRoute routes SNI host to port of Service svc, through Gateway gw. It
// names no listener: hostname and kind alone must attach it to "pass" or
// "term".
func tlsRoute(ns, name, gw, host, svc string, port gatewayv1.PortNumber) *gatewayv1.TLSRoute {
	return &gatewayv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gw)}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(svc), Port: ptr.To(port),
			}}}}},
		},
	}
}

// tlsRouteReady checks that the TLSRoute's status for its parent Gateway gw
// says Accepted and ResolvedRefs, both True for its current generation.
func tlsRouteReady(key types.NamespacedName, gw string) error {
	r := &gatewayv1.TLSRoute{}
	if err := rt.Client.Get(context.Background(), key, r); err != nil {
		return err
	}
	for _, p := range r.Status.Parents {
		if p.ParentRef.Name != gatewayv1.ObjectName(gw) {
			continue
		}
		for _, typ := range []string{"Accepted", "ResolvedRefs"} {
			c := meta.FindStatusCondition(p.Conditions, typ)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != r.Generation {
				return fmt.Errorf("TLSRoute %s, parent %s: %s is %+v, want True for generation %d", key, gw, typ, c, r.Generation)
			}
		}
		return nil
	}
	return fmt.Errorf("TLSRoute %s: no status for parent %s: %+v", key, gw, r.Status.Parents)
}

// passesThrough connects with want's hostname as SNI and checks that the
// backend's own certificate is presented (NGINX did not terminate) and that
// a GET over the connection is answered by a pod of Deployment app, which
// saw the client's SNI itself.
func passesThrough(addr string, want serverCert, ns, app string) error {
	conn, err := dialPresented(addr, want)
	if err != nil {
		return err
	}
	defer conn.Close()
	var got struct {
		echoHeaders
		Namespace string `json:"namespace"`
		TLS       *struct {
			ServerName string `json:"serverName"`
		} `json:"tls"`
	}
	if err := getOver(conn, want.host, &got); err != nil {
		return err
	}
	if got.Namespace != ns || !strings.HasPrefix(got.Pod, app+"-") {
		return fmt.Errorf("SNI %s: answered by pod %s/%s, want one of %s/%s", want.host, got.Namespace, got.Pod, ns, app)
	}
	if got.TLS == nil || got.TLS.ServerName != want.host {
		return fmt.Errorf("SNI %s: the backend saw TLS %+v, want its own connection with SNI %s", want.host, got.TLS, want.host)
	}
	return nil
}

// terminatedBy connects with want's hostname as SNI, checks that NGINX
// presents want (the listener's certificate), and that a GET reaches a pod
// of Deployment app; it returns what the pod saw.
func terminatedBy(addr string, want serverCert, ns, app string) (echoHeaders, error) {
	var got echoHeaders
	conn, err := dialPresented(addr, want)
	if err != nil {
		return got, err
	}
	defer conn.Close()
	if err := getOver(conn, want.host, &got); err != nil {
		return got, err
	}
	if !strings.HasPrefix(got.Pod, app+"-") {
		return got, fmt.Errorf("SNI %s: answered by pod %q, want one of %s/%s", want.host, got.Pod, ns, app)
	}
	return got, nil
}

// terminates checks an HTTPS listener (terminatedBy) whose backend sees
// the request as on any HTTPS listener: the client's address, scheme https
// and port 443, although the connection went through the stream front and
// a unix socket.
func terminates(addr string, want serverCert, ns, app string) error {
	got, err := terminatedBy(addr, want, ns, app)
	if err != nil {
		return err
	}
	for _, h := range [][2]string{{"X-Forwarded-For", gatewayClientIP()}, {"X-Forwarded-Proto", "https"}, {"X-Forwarded-Port", "443"}} {
		if v := got.Headers[h[0]]; len(v) != 1 || v[0] != h[1] {
			return fmt.Errorf("SNI %s: the backend saw %s %q, want %q", want.host, h[0], v, h[1])
		}
	}
	return nil
}

// terminatedAsIs checks a TLS listener in mode Terminate (terminatedBy)
// that passes the decrypted bytes on as they are: the backend sees none of
// the X-Forwarded-* headers an HTTP proxy would add.
func terminatedAsIs(addr string, want serverCert, ns, app string) error {
	got, err := terminatedBy(addr, want, ns, app)
	if err != nil {
		return err
	}
	for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Proto"} {
		if v, ok := got.Headers[h]; ok {
			return fmt.Errorf("SNI %s: the backend saw %s %q: the request was proxied as HTTP, not passed on", want.host, h, v)
		}
	}
	return nil
}

// gatewayClientIP is the client address NGINX sees for the test's
// connections. The Gateway's address is served by the local runtime's load
// balancer, a userspace proxy in this process (internal/local/loadbalancer)
// that dials NGINX's pod from the host's end of the node's uplink; NGINX
// never sees the test's own (loopback) end of its connection.
func gatewayClientIP() string { return rt.Node.Network().HostIP.String() }

// refused connects with SNI host and checks that the handshake fails. If
// it completes, the error says which certificate was presented (naming it
// if it is one of ours) and what a GET over the connection answered.
func refused(addr, host string, ours ...serverCert) error {
	conn, err := dialTLS(addr, host)
	if err != nil {
		return nil // refused, as wanted
	}
	defer conn.Close()
	seen := "no certificate"
	if certs := conn.ConnectionState().PeerCertificates; len(certs) > 0 {
		seen = describe(certs[0])
		for _, c := range ours {
			if certs[0].Equal(c.cert) {
				seen += " (the one made for " + c.host + ")"
			}
		}
	}
	var got echoHeaders
	var answer string
	if err := getOver(conn, host, &got); err != nil {
		answer = fmt.Sprintf("a GET over it failed (%v)", err)
	} else {
		answer = fmt.Sprintf("a GET over it was answered by pod %q", got.Pod)
	}
	return fmt.Errorf("SNI %s: the handshake completed (presented %s) and %s; want the handshake refused", host, seen, answer)
}

// dialTLS opens a TLS connection to port 443 of addr with SNI host. It
// accepts any certificate: the callers check which one was presented
// (presented verifies it), so that a wrong one is named in the failure.
func dialTLS(addr, host string) (*tls.Conn, error) {
	raw, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "443"), 5*time.Second)
	if err != nil {
		return nil, err
	}
	if err := raw.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		raw.Close()
		return nil, err
	}
	conn := tls.Client(raw, &tls.Config{ServerName: host, InsecureSkipVerify: true})
	if err := conn.Handshake(); err != nil {
		raw.Close()
		return nil, fmt.Errorf("SNI %s: handshake: %w", host, err)
	}
	return conn, nil
}

// dialPresented connects with want's hostname as SNI and checks that want
// is the certificate presented (presented).
func dialPresented(addr string, want serverCert) (*tls.Conn, error) {
	conn, err := dialTLS(addr, want.host)
	if err != nil {
		return nil, err
	}
	if err := presented(conn.ConnectionState(), want); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// presented checks that the server presented exactly want's certificate
// and that it verifies for want's hostname against a pool holding only it.
func presented(cs tls.ConnectionState, want serverCert) error {
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("SNI %s: no certificate presented", want.host)
	}
	leaf := cs.PeerCertificates[0]
	if !leaf.Equal(want.cert) {
		return fmt.Errorf("SNI %s: presented %s, want %s", want.host, describe(leaf), describe(want.cert))
	}
	roots := x509.NewCertPool()
	roots.AddCert(want.cert)
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: want.host, Roots: roots}); err != nil {
		return fmt.Errorf("SNI %s: verifying %s: %w", want.host, describe(leaf), err)
	}
	return nil
}

// getOver sends GET / with Host host over conn (HTTP/1.1: no ALPN was
// offered) and decodes echo-basic's JSON answer into into.
func getOver(conn *tls.Conn, host string, into any) error {
	req, err := http.NewRequest(http.MethodGet, "https://"+host+"/", nil)
	if err != nil {
		return err
	}
	req.Close = true
	if err := req.Write(conn); err != nil {
		return fmt.Errorf("SNI %s: sending GET: %w", host, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return fmt.Errorf("SNI %s: reading the answer: %w", host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("SNI %s: reading the body: %w", host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("SNI %s: GET answered %d %q, want 200", host, resp.StatusCode, trunc(string(body)))
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("SNI %s: echo answer %q: %w", host, trunc(string(body)), err)
	}
	return nil
}

// serverCert is a self-signed server certificate for one hostname, and its key.
type serverCert struct {
	host            string
	cert            *x509.Certificate
	certPEM, keyPEM []byte
}

func selfSigned(t *testing.T, host string) serverCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return serverCert{
		host: host, cert: cert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}

// secret is the certificate as a kubernetes.io/tls Secret.
func (c serverCert) secret(ns, name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: c.certPEM, corev1.TLSPrivateKeyKey: c.keyPEM},
	}
}

func describe(c *x509.Certificate) string {
	return fmt.Sprintf("%q (serial %x)", c.Subject.CommonName, c.SerialNumber)
}
