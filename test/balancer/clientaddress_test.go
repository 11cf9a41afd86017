package balancer

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// The client's address behind a load balancer (NginxProxy rewriteClientIP)
// on real NGINX. The load balancer is 127.0.0.5 (trusted); 127.0.0.9 is a
// client that connects directly (not trusted) and says it is someone else.

const (
	balancerAddr  = "127.0.0.5"
	untrustedAddr = "127.0.0.9"
	tcpBackendIP  = "10.99.0.6"
)

// clientAddressManifests is a Gateway whose class's NginxProxy sets
// rewrite (rewriteClientIP's YAML): a plain HTTP port (80), a cleartext
// port sniffed for gRPC (8888), an HTTPS port behind TLS passthrough
// (443), a TCP listener (5432); a route limited to one request a minute
// per client address, and one balanced by ip_hash.
func clientAddressManifests(t *testing.T, rewrite string) string {
	return classWithNginxProxy("rewriteClientIP:\n"+indent(rewrite, "  ")) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: nginx
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: sniffed, port: 8888, protocol: HTTP}
  - {name: https, port: 443, protocol: HTTPS, hostname: web.test, tls: {certificateRefs: [{name: web}]}}
  - {name: pass, port: 443, protocol: TLS, hostname: "*.pass.test", tls: {mode: Passthrough}}
  - {name: tcp, port: 5432, protocol: TCP}
---
` + webSecret(t) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: echo, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: http}, {name: gw, sectionName: sniffed}, {name: gw, sectionName: https}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /echo}}]
    backendRefs: [{name: echo, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: limited, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /limited}}]
    backendRefs: [{name: echo, port: 80}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: RateLimitPolicy
metadata: {name: per-client, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: limited}]
  rateLimit:
    rejectCode: 429
    local:
      rules: [{rate: 1r/m, key: $binary_remote_addr, burst: 0}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: hashed, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /hashed}}]
    backendRefs: [{name: hashed, port: 80}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: hashed, namespace: ns}
spec:
  targetRefs: [{group: "", kind: Service, name: hashed}]
  loadBalancingMethod: ip_hash
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: sniffed}]
  rules:
  - backendRefs: [{name: grpc, port: 9000}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: tcp, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: tcp}]
  rules:
  - backendRefs: [{name: tcp, port: 5432}]
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: hashed, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: grpc, namespace: ns}
spec: {ports: [{name: grpc, port: 9000, appProtocol: kubernetes.io/h2c}]}
---
apiVersion: v1
kind: Service
metadata: {name: tcp, namespace: ns}
spec: {ports: [{name: pg, port: 5432, targetPort: 6432}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: tcp, namespace: ns, labels: {kubernetes.io/service-name: tcp}}
addressType: IPv4
ports: [{name: pg, port: 6432, protocol: TCP}]
endpoints: [{addresses: [` + tcpBackendIP + `]}]
`
}

// selfSigned is a certificate and key (PEM) for name.
func selfSigned(t *testing.T, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	_, cert, _ := testCerts(t, name, "unused.test")
	der, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// addressPlane serves clientAddressManifests with an echo backend, four
// ip_hash backends and a TCP backend echoing what it reads.
type addressPlane struct {
	*dataPlane
}

func startAddressPlane(t *testing.T, rewrite string) *addressPlane {
	t.Helper()
	requireTools(t)
	res := render.Render(decodeText(t, clientAddressManifests(t, rewrite)), metav1.Now())
	files := res.Files[gwKey]
	if files == nil {
		t.Fatalf("the Gateway was not rendered: %v", res.Statuses)
	}
	d := startDataPlaneWith(t, nginxtest.ServeOptions{Files: files, Addrs: []string{tcpBackendIP + "/32"}})
	p := &addressPlane{dataPlane: d}
	echo := d.echoBackend("echo", "127.0.0.2", nil)
	set := endpoints.Set{}
	for k, v := range res.Endpoints[gwKey] {
		set[k] = v
	}
	key := func(svc string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: svc} }
	set[config.UpstreamID(key("echo"), 80)] = endpoints.Upstream{Name: config.UpstreamName(key("echo"), 80), Endpoints: []string{echo.addr}}
	var hashed []string
	for i := range 4 {
		b := d.echoBackend(fmt.Sprintf("hashed-%d", i), fmt.Sprintf("127.0.0.%d", 20+i), nil)
		hashed = append(hashed, b.addr)
	}
	set[config.UpstreamID(key("hashed"), 80)] = endpoints.Upstream{Name: config.UpstreamName(key("hashed"), 80), Endpoints: hashed}
	d.setEndpoints(set)
	l, err := d.srv.Listen("tcp", tcpBackendIP+":6432")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				_, _ = io.WriteString(c, "got "+line)
			}()
		}
	}()
	return p
}

// proxyHeader is a PROXY protocol v1 header for a client at src.
func proxyHeader(src string, dstPort int) string {
	return fmt.Sprintf("PROXY TCP4 %s 10.0.0.1 4321 %d\r\n", src, dstPort)
}

// ask sends one request from laddr to port, after prefix (a PROXY header,
// or nothing), over TLS when serverName is set, and returns what the echo
// backend received ("" and the error when there is no answer).
func (p *addressPlane) ask(laddr string, port int, prefix, serverName, path string, header http.Header) (echoed, int, error) {
	conn, err := p.srv.DialFrom("tcp", laddr+":0", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return echoed{}, 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, prefix); err != nil {
		return echoed{}, 0, err
	}
	var rw net.Conn = conn
	host := "echo.test"
	if serverName != "" {
		tc := tls.Client(conn, &tls.Config{ServerName: serverName, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
		if err := tc.Handshake(); err != nil {
			return echoed{}, 0, err
		}
		rw, host = tc, serverName
	}
	req, _ := http.NewRequest("GET", "http://"+host+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Close = true
	if err := req.Write(rw); err != nil {
		return echoed{}, 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(rw), req)
	if err != nil {
		return echoed{}, 0, err
	}
	defer resp.Body.Close()
	var e echoed
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Type") == "application/json" {
		e = decodeEchoed(p.t, body)
	}
	return e, resp.StatusCode, nil
}

// loggedAddress is the client address of the access log's line of path
// (NGINX's combined format starts with it).
func (p *addressPlane) loggedAddress(path string) string {
	p.t.Helper()
	var addr string
	p.eventually("the access log's line of "+path, func() bool {
		for _, line := range strings.Split(p.srv.Output(), "\n") {
			if strings.Contains(line, "GET "+path+" ") {
				addr, _, _ = strings.Cut(line, " ")
				return true
			}
		}
		return false
	})
	return addr
}

// TestRewriteClientIPProxyProtocol: behind a load balancer sending the
// PROXY protocol on every port, NGINX takes the client's address from the
// load balancer's header only: the backend's X-Real-IP and
// X-Forwarded-For, the access log, the rate limit's key and ip_hash see
// it, on a plain port, a port sniffed for gRPC and an HTTPS port behind
// TLS passthrough; a client that connects itself with a header saying it
// is someone else stays itself; a connection without a header is closed
// (a client cannot bypass the load balancer to choose an address), as on
// the TCP listener, which hands its backend the bytes after the header.
func TestRewriteClientIPProxyProtocol(t *testing.T) {
	p := startAddressPlane(t, "mode: ProxyProtocol\ntrustedAddresses: [{type: IPAddress, value: "+balancerAddr+"}]")
	for _, c := range []struct {
		name, from, client string
		port               int
		serverName         string
		want               string
	}{
		{"plain port", balancerAddr, "203.0.113.7", 80, "", "203.0.113.7"},
		{"port sniffed for gRPC", balancerAddr, "203.0.113.8", 8888, "", "203.0.113.8"},
		{"HTTPS behind TLS passthrough", balancerAddr, "203.0.113.9", 443, "web.test", "203.0.113.9"},
		{"untrusted peer on a plain port", untrustedAddr, "203.0.113.10", 80, "", untrustedAddr},
		{"untrusted peer on a sniffed port", untrustedAddr, "203.0.113.11", 8888, "", untrustedAddr},
		{"untrusted peer behind TLS passthrough", untrustedAddr, "203.0.113.12", 443, "web.test", untrustedAddr},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := "/echo/" + strings.ReplaceAll(c.name, " ", "-")
			e, status, err := p.ask(c.from, c.port, proxyHeader(c.client, 9999), c.serverName, path, http.Header{"X-Real-Ip": {"198.18.0.1"}})
			if err != nil || status != http.StatusOK {
				t.Fatalf("status %d, %v", status, err)
			}
			for name, want := range map[string]string{"X-Real-Ip": c.want, "X-Forwarded-For": c.want} {
				if got, _ := one(t, e.Header, name); got != want {
					t.Errorf("the backend received %s %q, want %q", name, got, want)
				}
			}
			// The port NGINX listens on, not one a PROXY header names.
			if got, _ := one(t, e.Header, "X-Forwarded-Port"); got != fmt.Sprint(c.port) {
				t.Errorf("the backend received X-Forwarded-Port %q, want %d", got, c.port)
			}
			if got := p.loggedAddress(path); got != c.want {
				t.Errorf("the access log says %q, want %q", got, c.want)
			}
		})
	}
	t.Run("no PROXY header", func(t *testing.T) {
		for _, port := range []int{80, 8888, 443} {
			if _, status, err := p.ask(balancerAddr, port, "", "", "/echo/direct", nil); err == nil {
				t.Errorf("port %d answered %d to a connection without a PROXY header", port, status)
			}
		}
	})
	t.Run("rate limit per client", func(t *testing.T) {
		for i, step := range []struct {
			from, client string
			want         int
		}{
			{balancerAddr, "198.51.100.1", 200}, {balancerAddr, "198.51.100.1", 429},
			{balancerAddr, "198.51.100.2", 200},
			// Saying it is 198.51.100.2 does not spend that client's limit.
			{untrustedAddr, "198.51.100.2", 200}, {balancerAddr, "198.51.100.2", 429},
		} {
			if _, status, err := p.ask(step.from, 80, proxyHeader(step.client, 80), "", fmt.Sprintf("/limited/%d", i), nil); err != nil || status != step.want {
				t.Errorf("request %d from %s as %s: %d (%v), want %d", i, step.from, step.client, status, err, step.want)
			}
		}
	})
	t.Run("ip_hash", func(t *testing.T) {
		picked := map[string]bool{}
		for _, client := range []string{"198.51.100.7", "203.0.113.7", "192.0.2.7", "100.64.1.7", "100.64.2.7", "100.64.3.7", "172.16.9.7", "172.16.10.7"} {
			first := ""
			for range 3 {
				e, status, err := p.ask(balancerAddr, 80, proxyHeader(client, 80), "", "/hashed", nil)
				if err != nil || status != http.StatusOK {
					t.Fatalf("%s: %d, %v", client, status, err)
				}
				if first == "" {
					first = e.Backend
				} else if e.Backend != first {
					t.Errorf("client %s went to %s, then %s", client, first, e.Backend)
				}
			}
			picked[first] = true
		}
		if len(picked) < 2 {
			t.Errorf("8 clients behind one load balancer all went to %v: ip_hash hashed the balancer's address", picked)
		}
	})
	t.Run("TCP listener", func(t *testing.T) {
		talk := func(prefix string) string {
			conn, err := p.srv.DialFrom("tcp", balancerAddr+":0", "127.0.0.1:5432")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(conn, prefix+"hello\n")
			got, _ := io.ReadAll(conn)
			return string(got)
		}
		if got := talk(proxyHeader("203.0.113.20", 5432)); got != "got hello\n" {
			t.Errorf("through the load balancer, the backend answered %q, want %q: the header is NGINX's, not the backend's", got, "got hello\n")
		}
		if got := talk(""); got != "" {
			t.Errorf("without a PROXY header, the backend answered %q", got)
		}
	})
}

// TestRewriteClientIPForwardedFor: behind a proxy setting
// X-Forwarded-For, NGINX takes the client's address from a trusted
// proxy's header: with setIPRecursively, the right-most address that is
// not a trusted proxy's, else the right-most; a client connecting itself
// with the header stays itself. On a port whose HTTP servers listen
// behind the stream module (sniffed for gRPC) the header is not read, as
// the Gateway's status says.
func TestRewriteClientIPForwardedFor(t *testing.T) {
	for _, c := range []struct {
		recursive bool
		want      string
	}{{true, "198.51.100.1"}, {false, balancerAddr}} {
		t.Run(fmt.Sprintf("setIPRecursively %v", c.recursive), func(t *testing.T) {
			p := startAddressPlane(t, fmt.Sprintf("mode: XForwardedFor\nsetIPRecursively: %v\ntrustedAddresses: [{type: CIDR, value: %s/32}]", c.recursive, balancerAddr))
			for _, step := range []struct {
				name, from, xff string
				port            int
				want            string
			}{
				{"one proxy", balancerAddr, "198.51.100.1", 80, "198.51.100.1"},
				{"two proxies", balancerAddr, "198.51.100.1, " + balancerAddr, 80, c.want},
				{"spoofed", untrustedAddr, "198.51.100.1", 80, untrustedAddr},
				{"behind the sniffer", balancerAddr, "198.51.100.1", 8888, balancerAddr},
			} {
				path := "/echo/" + strings.ReplaceAll(step.name, " ", "-")
				e, status, err := p.ask(step.from, step.port, "", "", path, http.Header{"X-Forwarded-For": {step.xff}})
				if err != nil || status != http.StatusOK {
					t.Fatalf("%s: status %d, %v", step.name, status, err)
				}
				if got, _ := one(t, e.Header, "X-Real-Ip"); got != step.want {
					t.Errorf("%s: the backend received X-Real-IP %q, want %q", step.name, got, step.want)
				}
				if got := p.loggedAddress(path); got != step.want {
					t.Errorf("%s: the access log says %q, want %q", step.name, got, step.want)
				}
			}
		})
	}
}
