package balancer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/dnstest"
	"github.com/gatewall/gatewall/test/feedtest"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// dnsRoutes are routes to ExternalName Services: one whose name the test's
// DNS server answers, one whose name does not exist.
const dnsRoutes = `
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: ns}
spec: {type: ExternalName, externalName: backend.test, ports: [{name: http, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: gone, namespace: ns}
spec: {type: ExternalName, externalName: nowhere.test, ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ext, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /ext}}]
    backendRefs: [{name: ext, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /gone}}]
    backendRefs: [{name: gone, port: 8080}]
`

// TestDNSNamedBackends: an ExternalName backend answers through a real
// NGINX, its name resolved by the data plane's own endpoints client from
// the manager's own feed; when its DNS answer changes, traffic moves to the
// new address with the same NGINX workers (no reload); an answer of the
// data plane's own loopback never reaches NGINX; a name that does not
// resolve answers 503, is reported to the manager, and the other routes
// keep working.
func TestDNSNamedBackends(t *testing.T) {
	requireTools(t)
	res := render.Render(decodeText(t, manifests+dnsRoutes), metav1.Now())
	files, set := res.Files[gwKey], res.Endpoints[gwKey]
	if files == nil {
		t.Fatal("the Gateway was not rendered")
	}
	d := startDataPlaneWith(t, nginxtest.ServeOptions{Files: files, Addrs: []string{"10.99.0.1/32", "10.99.0.2/32", "10.99.0.3/32"}})
	one, two, rr := d.backend("one", "10.99.0.1"), d.backend("two", "10.99.0.2"), d.backend("rr", "10.99.0.3")
	// A listener of the data plane's own namespace on loopback: a DNS
	// answer of 127.0.0.1 must never reach it.
	self := d.backend("self", "127.0.0.1")
	var hosts sync.Map
	for _, b := range []*backend{one, two} {
		b.status = func(r *http.Request) int { hosts.Store(r.Host, true); return 0 }
	}
	set[upstreamID("rr")] = endpoints.Upstream{Name: upstreamName("rr"), Endpoints: []string{rr.addr}}

	dns := dnstest.Start(t)
	dns.Set("backend.test", 1, "10.99.0.1")
	f := feedtest.Start(t, gwKey)
	f.Set(gwKey, set, endpoints.Resolver{Servers: []string{dns.Addr}})
	f.RunClient(t, endpointfeed.ClientOptions{Applier: d.feed, DNS: endpointfeed.DNSOptions{MinRefresh: 300 * time.Millisecond, StaleFor: time.Second}})

	d.eventually("the ExternalName backend answering", func() bool { return d.route("/ext") == "200 one" })
	if _, ok := hosts.Load("backend.test"); !ok {
		t.Error("the ExternalName backend was not sent its name as Host")
	}
	workers := d.workers()
	if got := d.route("/gone"); !strings.HasPrefix(got, "503") {
		t.Errorf("a name that does not exist: %s, want 503", got)
	}
	d.eventually("the name reported", func() bool {
		st := f.Status(gwKey)
		return len(st.Pods) == 1 && strings.Contains(st.Pods[0].UnresolvedString(), "nowhere.test: no such name (NXDOMAIN)")
	})

	dns.Set("backend.test", 1, "10.99.0.2")
	d.eventually("traffic on the new address", func() bool { return d.route("/ext") == "200 two" })
	for range 20 {
		if got := d.route("/ext"); got != "200 two" {
			t.Fatalf("after the move: %s", got)
		}
		if got := d.route("/rr"); got != "200 rr" {
			t.Fatalf("another route: %s", got)
		}
	}
	if d.workers() != workers {
		t.Error("NGINX's workers changed: the new address took a reload")
	}

	dns.Set("backend.test", 1, "127.0.0.1")
	d.eventually("the loopback answer refused", func() bool { return strings.HasPrefix(d.route("/ext"), "503") })
	if n, _ := self.stats(); n > 0 {
		t.Errorf("the data plane's own listener got %d requests", n)
	}
	d.eventually("the refusal reported", func() bool {
		st := f.Status(gwKey)
		return len(st.Pods) == 1 && strings.Contains(st.Pods[0].UnresolvedString(), "backend.test: it resolves only to addresses Gatewall refuses")
	})
	if got := d.route("/rr"); got != "200 rr" {
		t.Errorf("another route: %s", got)
	}
	state, err := os.ReadFile(d.path(endpoints.StateFile))
	if err != nil || strings.Contains(string(state), "127.0.0.1") || strings.Contains(string(state), ".test") {
		t.Errorf("the state file NGINX loads holds %s (%v)", state, err)
	}
}

// TestExternalNameOverTLS: a BackendTLSPolicy on an ExternalName Service
// (NGF's externalname-service guide) makes NGINX speak TLS to the
// addresses its name resolves to, sending the policy's hostname as SNI and
// verifying the certificate against the policy's CA: an address whose
// certificate is for another name is refused (502), though DNS sent the
// request there.
func TestExternalNameOverTLS(t *testing.T) {
	requireTools(t)
	caPEM, good, wrong := testCerts(t, "backend.test", "other.test")
	text := manifests + `
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: ns}
spec: {type: ExternalName, externalName: backend.test, ports: [{name: https, port: 8443}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca, namespace: ns}
data:
  ca.crt: |
` + indent(caPEM, "    ") + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: ext, namespace: ns}
spec:
  targetRefs: [{group: "", kind: Service, name: ext}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]
    hostname: backend.test
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ext, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /ext}}]
    backendRefs: [{name: ext, port: 8443}]
`
	res := render.Render(decodeText(t, text), metav1.Now())
	files, set := res.Files[gwKey], res.Endpoints[gwKey]
	if files == nil {
		t.Fatal("the Gateway was not rendered")
	}
	d := startDataPlaneWith(t, nginxtest.ServeOptions{Files: files, Addrs: []string{"10.99.0.4/32", "10.99.0.5/32"}})
	var mu sync.Mutex
	var sni, host []string
	serve := func(ip string, cert tls.Certificate) {
		l, err := d.srv.Listen("tcp", ip+":8443")
		if err != nil {
			t.Fatal(err)
		}
		s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			sni, host = append(sni, r.TLS.ServerName), append(host, r.Host)
			mu.Unlock()
			_, _ = w.Write([]byte(ip))
		})}
		go func() {
			_ = s.Serve(tls.NewListener(l, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}))
		}()
		t.Cleanup(func() { _ = s.Close() })
	}
	serve("10.99.0.4", good)
	serve("10.99.0.5", wrong)
	dns := dnstest.Start(t)
	dns.Set("backend.test", 1, "10.99.0.4")
	f := feedtest.Start(t, gwKey)
	f.Set(gwKey, set, endpoints.Resolver{Servers: []string{dns.Addr}})
	f.RunClient(t, endpointfeed.ClientOptions{Applier: d.feed, DNS: endpointfeed.DNSOptions{MinRefresh: 300 * time.Millisecond, StaleFor: time.Second}})
	d.eventually("the ExternalName answering over TLS", func() bool { return d.route("/ext") == "200 10.99.0.4" })
	mu.Lock()
	if sni[0] != "backend.test" || host[0] != "backend.test" {
		t.Errorf("SNI %q, Host %q; want the external name", sni[0], host[0])
	}
	mu.Unlock()
	dns.Set("backend.test", 1, "10.99.0.5")
	d.eventually("the address with another name's certificate refused", func() bool { return strings.HasPrefix(d.route("/ext"), "502") })
	// NGINX's error log reaches the test through a pipe, possibly after
	// the answer: wait for it.
	d.eventually("NGINX saying it refused the certificate", func() bool {
		return d.count("upstream SSL certificate does not match") > 0 || d.count("certificate verify failed") > 0
	})
}

// testCerts are a CA (PEM) and a server certificate it signed for each name.
func testCerts(t *testing.T, names ...string) (string, tls.Certificate, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	var certs []tls.Certificate
	for i, n := range names {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: n}, DNSNames: []string{n},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		certs = append(certs, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key})
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})), certs[0], certs[1]
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
