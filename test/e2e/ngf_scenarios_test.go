package e2e

import (
	"bufio"
	"context"
	"crypto/elliptic"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"

	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/test/jwttest"
)

// TestNGFScenarios applies test/ngf's scenarios whose behaviour needs a
// cluster, as NGF's guides of their shapes apply them, and checks what the
// guides describe with HTTP, TLS and gRPC clients. Each runs in namespaces
// and behind a Gateway of its own, in parallel. The snippets scenario
// needs the manager's --snippets, which this package's runtime passes.
func TestNGFScenarios(t *testing.T) {
	gatewayClass(t)
	t.Run("basic-authentication", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "basic-authentication", nil)
		x := answers(t, run.addr, "GET", "office.example.com", "/reports/q3", nil, 401, "")
		if got := x.header.Get("WWW-Authenticate"); got != `Basic realm="Back office"` {
			t.Errorf("WWW-Authenticate %q, want the filter's realm", got)
		}
		answers(t, run.addr, "GET", "office.example.com", "/reports/q3", basicAuth("reader", "wrong-key"), 401, "")
		answers(t, run.addr, "GET", "office.example.com", "/reports/q3", basicAuth("reader", "shelf-key-7"), 200, "reports-")
		answers(t, run.addr, "GET", "office.example.com", "/catalog", nil, 200, "catalog-")
	})
	t.Run("request-and-response-headers", func(t *testing.T) {
		t.Parallel()
		req := applyNGFScenario(t, "request-headers", nil)
		x := answers(t, req.addr, "PUT", "inspect.example.com", "/inspect", http.Header{
			"X-Replaced": {"from-client"}, "X-Appended": {"client-value"}, "User-Agent": {"scenario-client/1"}}, 200, "inspector-")
		want := map[string]string{"X-Replaced": "only-this-value", "X-Appended": "client-value,appended-by-route", "X-Method": "PUT"}
		for name, v := range want {
			if got := strings.Join(x.echo.Headers[name], ","); got != v {
				t.Errorf("the backend received %s %q, want %q", name, got, v)
			}
		}
		if ua := x.echo.Headers["User-Agent"]; len(ua) > 0 {
			t.Errorf("the backend received User-Agent %q, which the route removes", ua)
		}
		if a := x.echo.Headers["X-Client-Addr"]; len(a) != 1 || net.ParseIP(a[0]) == nil {
			t.Errorf("X-Client-Addr %q is not the client's address", x.echo.Headers["X-Client-Addr"])
		}

		resp := applyNGFScenario(t, "response-headers", nil)
		x = answers(t, resp.addr, "GET", "inspect.example.com", "/inspect", http.Header{"X-Echo-Set-Header": {"X-Dropped: yes, X-Set-Here: from-backend"}}, 200, "inspector-")
		if got := x.header.Get("X-Set-Here"); got != "replaced-value" {
			t.Errorf("X-Set-Here %q, want the route's", got)
		}
		if got := x.header.Values("X-Added-Here"); len(got) != 1 || got[0] != "added-by-route" {
			t.Errorf("X-Added-Here %q", got)
		}
		if got := x.header.Get("X-Dropped"); got != "" {
			t.Errorf("X-Dropped %q reached the client, which the route removes", got)
		}
		if id := x.header.Get("X-Request-Id"); len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Errorf("X-Request-Id %q, want NGINX's request ID", id)
		}
		if got := x.header.Get("X-Seen-From"); net.ParseIP(got) == nil {
			t.Errorf("X-Seen-From %q, want the client's address", got)
		}
	})
	t.Run("advanced-routing", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "advanced-routing", nil)
		for _, c := range []struct {
			method, path string
			header       http.Header
			pod          string
		}{
			{"GET", "/orders", nil, "orders-v1-"},
			{"GET", "/orders", http.Header{"X-Track": {"beta"}}, "orders-v2-"},
			{"GET", "/orders?track=beta", nil, "orders-v2-"},
			{"GET", "/orders", http.Header{"X-Variant": {"variant-q"}}, "orders-v3-"},
			{"GET", "/orders?pick=pick-z", nil, "orders-v3-"},
			{"GET", "/orders", http.Header{"X-Variant": {"variant-7"}}, "orders-v1-"},
			{"GET", "/orders/abc", nil, "orders-v1-"},
			{"POST", "/catalog", nil, "catalog-writes-"},
			{"GET", "/catalog", nil, "catalog-reads-"},
		} {
			answers(t, run.addr, c.method, "shop.example.com", c.path, c.header, 200, c.pod)
		}
	})
	t.Run("cross-namespace-routing", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "cross-namespace-routing", nil)
		x := answers(t, run.addr, "GET", "shop.example.com", "/orders/1", nil, 200, "orders-")
		if x.echo.Namespace != run.ns+"-warehouse" {
			t.Errorf("answered from namespace %q, want %s-warehouse", x.echo.Namespace, run.ns)
		}
		answers(t, run.addr, "GET", "shop.example.com", "/catalog", nil, 200, "catalog-")
		answers(t, run.addr, "GET", "shop.example.com", "/catalog/x", nil, 404, "")
	})
	t.Run("external-authentication", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "external-authentication", nil)
		answers(t, run.addr, "GET", "shop.example.com", "/orders/7", nil, 401, "")
		answers(t, run.addr, "GET", "shop.example.com", "/orders/7", http.Header{"X-Api-Token": {"guess"}}, 401, "")
		x := answers(t, run.addr, "GET", "shop.example.com", "/orders/7", http.Header{"X-Api-Token": {"let-me-in"}}, 200, "orders-")
		if got := strings.Join(x.echo.Headers["X-Account"], ","); got != "account-7" {
			t.Errorf("the backend received X-Account %q, want the authorization service's", got)
		}
		answers(t, run.addr, "GET", "shop.example.com", "/catalog", nil, 200, "catalog-")
		// The authorization service down: its rule answers 500, the
		// others are served.
		scaleDeployment(t, types.NamespacedName{Namespace: run.ns, Name: "authz"}, 0)
		answers(t, run.addr, "GET", "shop.example.com", "/orders/7", http.Header{"X-Api-Token": {"let-me-in"}}, 500, "")
		answers(t, run.addr, "GET", "shop.example.com", "/catalog", nil, 200, "catalog-")
	})
	t.Run("https-termination", func(t *testing.T) { t.Parallel(); testHTTPSTermination(t) })
	t.Run("secure-backend", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "secure-backend", nil)
		x := answers(t, run.addr, "GET", "ledger.example.com", "/", nil, 200, "ledger-")
		if !strings.Contains(x.body, `"serverName": "ledger.example.com"`) {
			t.Errorf("the backend did not see a TLS connection for ledger.example.com: %s", trunc(x.body))
		}
	})
	t.Run("externalname-service", func(t *testing.T) { t.Parallel(); testExternalName(t) })
	t.Run("snippets", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "snippets", nil)
		answers(t, run.addr, "GET", "shop.example.com", "/orders", nil, 200, "orders-")
		answers(t, run.addr, "POST", "shop.example.com", "/orders", nil, 403, "")
		answers(t, run.addr, "DELETE", "shop.example.com", "/orders/3", nil, 403, "")
		answers(t, run.addr, "POST", "shop.example.com", "/catalog", nil, 200, "catalog-")
	})
	t.Run("grpc-headers", func(t *testing.T) { t.Parallel(); testGRPCHeaders(t) })
	t.Run("grpc-exact-method", func(t *testing.T) { t.Parallel(); testGRPCExactMethod(t) })
	t.Run("basic-routing", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "basic-routing", nil)
		answers(t, run.addr, "GET", "shop.example.com", "/orders/5", nil, 200, "orders-")
		answers(t, run.addr, "GET", "shop.example.com", "/catalog", nil, 200, "catalog-")
		answers(t, run.addr, "GET", "shop.example.com", "/catalog/5", nil, 404, "")
	})
	t.Run("cors-filter", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "cors-filter", nil)
		preflight := func(origin string) http.Header {
			return http.Header{"Origin": {origin}, "Access-Control-Request-Method": {"PUT"}}
		}
		x := answers(t, run.addr, "OPTIONS", "shop.example.com", "/orders", preflight("https://app.example.org"), 204, "")
		for name, want := range map[string]string{"Access-Control-Allow-Origin": "https://app.example.org",
			"Access-Control-Max-Age": "600", "Access-Control-Allow-Credentials": "true"} {
			if got := x.header.Get(name); got != want {
				t.Errorf("preflight %s %q, want %q", name, got, want)
			}
		}
		x = answers(t, run.addr, "OPTIONS", "shop.example.com", "/orders", preflight("https://shop.partners.example.org"), 204, "")
		if got := x.header.Get("Access-Control-Allow-Origin"); got != "https://shop.partners.example.org" {
			t.Errorf("a wildcard origin's preflight: Allow-Origin %q", got)
		}
		x, err := send(run.addr, "OPTIONS", "shop.example.com", "/orders", preflight("https://elsewhere.example.net"))
		if err != nil || x.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("an origin not listed: %d %v, Allow-Origin %q", x.status, err, x.header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("traffic-splitting", func(t *testing.T) {
		t.Parallel()
		run := applyNGFScenario(t, "traffic-splitting", nil)
		answers(t, run.addr, "GET", "shop.example.com", "/orders", nil, 200, "orders-v2-")
		answers(t, run.addr, "GET", "shop.example.com", "/orders", nil, 200, "orders-v1-")
		v2 := 0
		for range 200 {
			x, err := send(run.addr, "GET", "shop.example.com", "/orders", nil)
			if err != nil || x.status != 200 {
				t.Fatalf("GET /orders: %d %v", x.status, err)
			}
			if strings.HasPrefix(x.echo.Pod, "orders-v2-") {
				v2++
			}
		}
		// 25% of 200 is 50; 25 and 80 are beyond five standard deviations.
		if v2 < 25 || v2 > 80 {
			t.Errorf("orders-v2 answered %d of 200, want about 50 (weight 25 of 100)", v2)
		}
	})
	t.Run("jwt", func(t *testing.T) { t.Parallel(); testJWT(t) })
}

// testHTTPSTermination: plain HTTP redirects to HTTPS; HTTPS is served
// with the listener's certificate from the granted namespace, TLS 1.2 and
// 1.3 as its options say; then, the options changed to TLSv1.3 only, a
// TLS 1.2 client is refused in the handshake and a TLS 1.3 one served.
func testHTTPSTermination(t *testing.T) {
	run := applyNGFScenario(t, "https-termination", nil)
	x := answers(t, run.addr, "GET", "shop.example.com", "/orders", nil, 302, "")
	if loc := x.header.Get("Location"); loc != "https://shop.example.com/orders" {
		t.Errorf("redirected to %q", loc)
	}
	handshake := func(version uint16) error {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(run.addr, "443"), &tls.Config{
			ServerName: "shop.example.com", RootCAs: run.issued.CA.Pool(), MinVersion: version, MaxVersion: version})
		if err != nil {
			return err
		}
		defer conn.Close()
		req := "GET /orders HTTP/1.1\r\nHost: shop.example.com\r\nConnection: close\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET /orders over TLS: %d", resp.StatusCode)
		}
		return nil
	}
	eventually(t, 60*time.Second, func() error { return handshake(tls.VersionTLS12) })
	eventually(t, 10*time.Second, func() error { return handshake(tls.VersionTLS13) })

	gw := &unstructured.Unstructured{}
	gw.SetAPIVersion("gateway.networking.k8s.io/v1")
	gw.SetKind("Gateway")
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: run.ns, Name: "secure-front"}, gw); err != nil {
		t.Fatal(err)
	}
	listeners, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	for _, l := range listeners {
		l := l.(map[string]any)
		if l["name"] == "tls" {
			l["tls"].(map[string]any)["options"].(map[string]any)["nginx.org/ssl-protocols"] = "TLSv1.3"
		}
	}
	if err := unstructured.SetNestedSlice(gw.Object, listeners, "spec", "listeners"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Client.Update(context.Background(), gw); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() error {
		if err := handshake(tls.VersionTLS12); err == nil {
			return fmt.Errorf("a TLS 1.2 client is still served")
		}
		return handshake(tls.VersionTLS13)
	})
}

// testExternalName: the ExternalName backend answers. The local runtime
// has no internet: the Service names a Service of the cluster
// (partner.<ns>.svc.cluster.local), the NginxProxy's resolver is the
// cluster's DNS, and the route reaches it on plain HTTP (port 80) without
// the scenario's BackendTLSPolicy, whose system CAs would not verify a
// test backend.
func testExternalName(t *testing.T) {
	dns := clusterDNS(t)
	run := applyNGFScenario(t, "externalname-service", func(o *unstructured.Unstructured) bool {
		ns := o.GetNamespace()
		switch o.GetKind() {
		case "NginxProxy":
			_ = unstructured.SetNestedSlice(o.Object, []any{map[string]any{"type": "IPAddress", "value": dns}}, "spec", "dnsResolver", "addresses")
		case "Service":
			if o.GetName() == "partner-api" {
				_ = unstructured.SetNestedField(o.Object, "partner."+ns+".svc.cluster.local", "spec", "externalName")
				create(t, echo(ns, "partner", 1)[0], &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "partner"},
					Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "partner"},
						Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(3000)}}}})
			}
		case "HTTPRoute":
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			for _, r := range rules {
				for _, ref := range r.(map[string]any)["backendRefs"].([]any) {
					if ref := ref.(map[string]any); ref["name"] == "partner-api" {
						ref["port"] = int64(80)
					}
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, rules, "spec", "rules")
		case "BackendTLSPolicy":
			return false
		}
		return true
	})
	x := answers(t, run.addr, "GET", "shop.example.com", "/partner/quote", nil, 200, "partner-")
	if x.echo.Path != "/quote" {
		t.Errorf("the ExternalName backend received %q, want the rewritten /quote", x.echo.Path)
	}
	if x.echo.Host != "partner."+run.ns+".svc.cluster.local" {
		t.Errorf("the ExternalName backend received Host %q, want its name", x.echo.Host)
	}
	answers(t, run.addr, "GET", "shop.example.com", "/orders", nil, 200, "orders-")
}

// clusterDNS is the address of the local runtime's DNS Service (CoreDNS,
// which resolves the cluster's Service names).
func clusterDNS(t *testing.T) string {
	t.Helper()
	var list corev1.ServiceList
	if err := rt.Client.List(context.Background(), &list, client.InNamespace("kube-system")); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		for _, p := range s.Spec.Ports {
			if p.Port == 53 && p.Protocol == corev1.ProtocolUDP && s.Spec.ClusterIP != "" && s.Spec.ClusterIP != "None" {
				return s.Spec.ClusterIP
			}
		}
	}
	t.Fatal("no DNS Service in kube-system")
	return ""
}

// testGRPCHeaders: gRPC requests are routed by their metadata as the
// scenario's rules say, a regular expression with a quantifier included.
func testGRPCHeaders(t *testing.T) {
	run := applyNGFScenario(t, "grpc-headers", nil)
	conn, err := grpc.NewClient(net.JoinHostPort(run.addr, "80"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range []struct {
		md  []string
		pod string
	}{
		{[]string{"x-track", "stable"}, "rpc-v1-"},
		{[]string{"x-track", "beta"}, "rpc-v2-"},
		{[]string{"x-variant", "variant-k"}, "rpc-v2-"},
		{[]string{"x-track", "beta", "x-zone", "east"}, "rpc-v1-"},
		{[]string{"x-zone", "south"}, "rpc-v1-"},
		{[]string{"x-zone", "central"}, "rpc-v2-"},
	} {
		eventually(t, 60*time.Second, func() error {
			ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), c.md...), 5*time.Second)
			defer cancel()
			resp, err := pb.NewGrpcEchoClient(conn).Echo(ctx, &pb.EchoRequest{})
			if err != nil {
				return fmt.Errorf("%v: %w", c.md, err)
			}
			if pod := resp.GetAssertions().GetContext().GetPod(); !strings.HasPrefix(pod, c.pod) {
				return fmt.Errorf("%v: answered by %q, want %s...", c.md, pod, c.pod)
			}
			return nil
		})
	}
}

// testJWT: an AuthenticationFilter of type JWT (NGF's API, which NGF
// serves on NGINX Plus only; Gatewall verifies tokens in its own Lua on
// NGINX OSS) with keys from a Secret: a signed token is let through, its
// claim forwarded as the filter says; no token, a tampered one, one
// signed by another key, an expired one, an unsigned one and one whose
// subject the authorization rules do not name are refused 401.
func testJWT(t *testing.T) {
	ns := namespace(t, "e2e-ngf-jwt")
	key, stranger := jwttest.EC("signing-1", elliptic.P256()), jwttest.EC("signing-1", elliptic.P256())
	create(t, echo(ns, "api", 1)...)
	create(t, gateway(ns, "gw"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "signing-keys"},
			Data: map[string][]byte{"auth": jwttest.JWKS([]jwttest.Key{key})}})
	filter, err := manifest.Decode([]byte(`
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: bearer, namespace: ` + ns + `}
spec:
  type: JWT
  jwt:
    realm: Accounts API
    source: File
    file: {secretRef: {name: signing-keys}}
    authorization:
      rules:
      - claims:
        - {name: sub, values: [ada, grace], proxySetHeader: X-Subject}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: ` + ns + `}
spec:
  parentRefs: [{name: gw}]
  hostnames: [api.example.com]
  rules:
  - filters:
    - type: ExtensionRef
      extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: bearer}
    backendRefs: [{name: api, port: 8080}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range filter {
		create(t, o)
	}
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 180*time.Second)
	now := time.Now().Unix()
	claims := func(sub string, exp int64) map[string]any { return map[string]any{"sub": sub, "iat": now, "exp": exp} }
	good := jwttest.Token{Alg: "ES256", Key: key, Claims: claims("ada", now+600)}.Sign()
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	x := answers(t, addr, "GET", "api.example.com", "/accounts", bearer(good), 200, "api-")
	if got := strings.Join(x.echo.Headers["X-Subject"], ","); got != "ada" {
		t.Errorf("the backend received X-Subject %q, want the token's sub", got)
	}
	parts := strings.Split(good, ".")
	tampered, _ := json.Marshal(claims("grace", now+600))
	for name, h := range map[string]http.Header{
		"no token":          nil,
		"claims tampered":   bearer(parts[0] + "." + jwttest.B64(tampered) + "." + parts[2]),
		"another key":       bearer(jwttest.Token{Alg: "ES256", Key: stranger, Claims: claims("ada", now+600)}.Sign()),
		"expired":           bearer(jwttest.Token{Alg: "ES256", Key: key, Claims: claims("ada", now-600)}.Sign()),
		"alg none":          bearer(jwttest.B64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."),
		"a subject refused": bearer(jwttest.Token{Alg: "ES256", Key: key, Claims: claims("mallory", now+600)}.Sign()),
	} {
		got, err := send(addr, "GET", "api.example.com", "/accounts", h)
		if err != nil || got.status != 401 || !strings.HasPrefix(got.header.Get("WWW-Authenticate"), `Bearer realm="Accounts API"`) {
			t.Errorf("%s: %d %q %v, want 401 with the filter's realm", name, got.status, got.header.Get("WWW-Authenticate"), err)
		}
	}
}

// testGRPCExactMethod: the method the route names reaches its backend; the
// service's other methods match no rule and are not served.
func testGRPCExactMethod(t *testing.T) {
	run := applyNGFScenario(t, "grpc-exact-method", nil)
	conn, err := grpc.NewClient(net.JoinHostPort(run.addr, "80"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	echoClient := pb.NewGrpcEchoClient(conn)
	eventually(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := echoClient.Echo(ctx, &pb.EchoRequest{})
		if err != nil {
			return err
		}
		if pod := resp.GetAssertions().GetContext().GetPod(); !strings.HasPrefix(pod, "rpc-v1-") {
			return fmt.Errorf("answered by %q", pod)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := echoClient.EchoTwo(ctx, &pb.EchoRequest{}); err == nil {
		t.Error("EchoTwo, which no rule matches, was served")
	}
}
