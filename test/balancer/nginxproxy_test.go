package balancer

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
)

// NginxProxy's NGINX-facing settings (NGINX Gateway Fabric's fields) on
// real NGINX: compression, the access log's format, the forwarding
// headers, HTTP/2, trace context, server tokens and workers.

// proxyPlaneManifests is a Gateway of HTTP port 80 and HTTPS port 443
// (web.test) whose class's NginxProxy has spec (YAML), with a route to an
// echo backend (/echo) and one to a backend of bodies (/body).
func proxyPlaneManifests(t *testing.T, spec string) string {
	return classWithNginxProxy(spec) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: nginx
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: https, port: 443, protocol: HTTPS, hostname: web.test, tls: {certificateRefs: [{name: web}]}}
---
` + webSecret(t) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: echo, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /echo}}]
    backendRefs: [{name: echo, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /set}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: X-Real-IP, value: "${remote_addr}"}]}
    backendRefs: [{name: echo, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /body}}]
    backendRefs: [{name: body, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: body, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
`
}

// classWithNginxProxy is the GatewayClass nginx whose parameters are the
// NginxProxy ns/class, of IPv4 and spec (YAML).
func classWithNginxProxy(spec string) string {
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec:
  controllerName: gateway.nginx.org/nginx-gateway-controller
  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: class, namespace: ns}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: class, namespace: ns}
spec:
  ipFamily: ipv4
` + indent(spec, "  ")
}

// webSecret is the Secret ns/web of a certificate for web.test.
func webSecret(t *testing.T) string {
	cert, key := selfSigned(t, "web.test")
	return `apiVersion: v1
kind: Secret
metadata: {name: web, namespace: ns}
type: kubernetes.io/tls
data: {tls.crt: ` + base64.StdEncoding.EncodeToString(cert) + `, tls.key: ` + base64.StdEncoding.EncodeToString(key) + `}`
}

// bodies are what the body backend answers, by path: a body and its type.
var bodies = map[string][2]string{
	"/body/big":   {`{"items":[` + strings.Repeat(`"an item of the list",`, 200) + `"end"]}`, "application/json"},
	"/body/small": {`{"ok":true}`, "application/json"},
	"/body/plain": {strings.Repeat("plain text line\n", 300), "text/plain"},
}

// startProxyPlane serves proxyPlaneManifests.
func startProxyPlane(t *testing.T, spec string) *dataPlane {
	t.Helper()
	requireTools(t)
	res := render.Render(decodeText(t, proxyPlaneManifests(t, spec)), metav1.Now())
	files := res.Files[gwKey]
	if files == nil {
		t.Fatalf("the Gateway was not rendered: %v", res.Statuses)
	}
	d := startDataPlane(t, files)
	echo := d.echoBackend("echo", "127.0.0.2", nil)
	l, err := d.srv.Listen("tcp", "127.0.0.3:8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header().Set("Content-Type", b[1])
		_, _ = io.WriteString(w, b[0])
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	key := func(svc string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: svc} }
	d.setEndpoints(endpoints.Set{
		config.UpstreamID(key("echo"), 80): {Name: config.UpstreamName(key("echo"), 80), Endpoints: []string{echo.addr}},
		config.UpstreamID(key("body"), 80): {Name: config.UpstreamName(key("body"), 80), Endpoints: []string{l.Addr().String()}},
	})
	return d
}

// request sends one request on port 80 and returns the response, its
// body as sent (not decompressed) and what the echo backend received.
func (d *dataPlane) request(path string, header http.Header) (*http.Response, []byte, echoed) {
	d.t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.srv.DialContext, DisableCompression: true, DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:80"+path, nil)
	req.Host = "echo.test"
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		d.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e echoed
	if resp.Header.Get("Content-Type") == "application/json" && strings.HasPrefix(path, "/echo") || strings.HasPrefix(path, "/set") {
		e = decodeEchoed(d.t, body)
	}
	return resp, body, e
}

// TestCompression: responses of the listed MIME types and at least
// minLength bytes are gzipped for clients that accept it, with Vary, and
// decompress to what the backend sent; others are sent as they are.
func TestCompression(t *testing.T) {
	d := startProxyPlane(t, `compression:
  type: gzip
  level: 6
  minLength: 1024
  mimeTypes: [application/json]
  buffers: {number: 8, size: 4k}
  gzip: {vary: true, httpVersion: "1.1"}`)
	gz := http.Header{"Accept-Encoding": {"gzip"}}
	for _, c := range []struct {
		path    string
		header  http.Header
		gzipped bool
	}{
		{"/body/big", gz, true},
		{"/body/small", gz, false},
		{"/body/plain", gz, false},
		{"/body/big", nil, false},
	} {
		resp, body, _ := d.request(c.path, c.header)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzipped {
			t.Errorf("%s %v: gzipped %v, want %v", c.path, c.header, got, c.gzipped)
			continue
		}
		if c.gzipped {
			if resp.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s: Vary %q", c.path, resp.Header.Get("Vary"))
			}
			if len(body) >= len(bodies[c.path][0]) {
				t.Errorf("%s: %d bytes gzipped, of %d", c.path, len(body), len(bodies[c.path][0]))
			}
			r, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(r)
		}
		if string(body) != bodies[c.path][0] {
			t.Errorf("%s: the client read %d bytes, not the backend's %d", c.path, len(body), len(bodies[c.path][0]))
		}
	}
}

// TestAccessLogFormat: the access log's lines are the NginxProxy's format
// exactly: allow-listed variables read (escaped as JSON), every other '$'
// and the variables that carry credentials written as text, quotes and
// backslashes as written, and the trace ID of the request.
func TestAccessLogFormat(t *testing.T) {
	d := startProxyPlane(t, `telemetry: {}
logging:
  accessLog:
    escape: json
    format: '{"client":"$remote_addr","req":"$request","st":$status,"q":"quote \" back \\ $ 5 $$x","auth":"$http_authorization","team":"$http_x_team","trace":"$otel_trace_id"}'`)
	d.request("/echo/log", http.Header{"Authorization": {"Bearer secret-token"}, "X-Team": {`pay"ments`}})
	want := regexp.MustCompile(`^\{"client":"127\.0\.0\.1","req":"GET /echo/log HTTP/1\.1","st":200,"q":"quote \\" back \\\\ \$ 5 \$\$x","auth":"\$http_authorization","team":"pay\\"ments","trace":"[0-9a-f]{32}"\}$`)
	d.eventually("the access log's line", func() bool { return strings.Contains(d.srv.Output(), `"req":"GET /echo/log`) })
	for _, line := range strings.Split(d.srv.Output(), "\n") {
		if strings.Contains(line, `"req":"GET /echo/log`) {
			if !want.MatchString(line) {
				t.Errorf("the access log's line is\n%s\nwant it to match\n%s", line, want)
			}
			if strings.Contains(line, "secret-token") {
				t.Error("the access log holds the request's credentials")
			}
			return
		}
	}
}

// TestDisableBaseHeaders: the forwarding headers the NginxProxy disables
// are not set by NGINX (the client's own reach the backend, a route's
// filter sets them), the others are, and the loop header always is.
func TestDisableBaseHeaders(t *testing.T) {
	d := startProxyPlane(t, `disableBaseHeaders: [X-Forwarded-For, X-Real-IP]`)
	client := http.Header{"X-Real-Ip": {"192.0.2.1"}, "X-Forwarded-For": {"192.0.2.2"}, "X-Forwarded-Proto": {"gopher"}}
	_, _, e := d.request("/echo/h", client)
	for name, want := range map[string]string{"X-Real-Ip": "192.0.2.1", "X-Forwarded-For": "192.0.2.2", "X-Forwarded-Proto": "http", "X-Forwarded-Port": "80"} {
		if got, _ := one(t, e.Header, name); got != want {
			t.Errorf("the backend received %s %q, want %q", name, got, want)
		}
	}
	if got, _ := one(t, e.Header, "X-Gatewall-Loop"); got == "" {
		t.Error("the loop header was not sent")
	}
	_, _, e = d.request("/set/h", client)
	if got, _ := one(t, e.Header, "X-Real-Ip"); got != "127.0.0.1" {
		t.Errorf("a route's filter set X-Real-IP, the backend received %q", got)
	}
}

// TestDisableHTTP2: HTTPS listeners negotiate HTTP/2 with clients that
// offer it, and HTTP/1.1 once the NginxProxy disables HTTP/2.
func TestDisableHTTP2(t *testing.T) {
	for _, c := range []struct {
		spec, want string
	}{{"disableHTTP2: false", "h2"}, {"disableHTTP2: true", "http/1.1"}} {
		t.Run(c.spec, func(t *testing.T) {
			d := startProxyPlane(t, c.spec)
			conn, err := d.srv.Dial("tcp", "127.0.0.1:443")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			tc := tls.Client(conn, &tls.Config{ServerName: "web.test", InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			if got := tc.ConnectionState().NegotiatedProtocol; got != c.want {
				t.Errorf("negotiated %q, want %q", got, c.want)
			}
		})
	}
}

// TestTraceContext: with telemetry on, a valid W3C traceparent reaches the
// backend unchanged with its tracestate; a request without one, or with an
// invalid one, gets one made of its request ID (parent ID its first 16
// digits, sampled) and no tracestate; the access log holds the trace and
// span IDs the backend got.
func TestTraceContext(t *testing.T) {
	d := startProxyPlane(t, `telemetry:
  exporter: {endpoint: "collector:4317"}`)
	const valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	made := regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)
	seen := map[string]bool{}
	for i, c := range []struct {
		traceparent string
		passed      bool
	}{
		{"", false},
		{"", false},
		{valid, true},
		{"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-later-fields", true},
		{"00-00000000000000000000000000000000-b7ad6b7169203331-01", false},
		{"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", false},
		{"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", false},
		{"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", false},
		{valid + "-extra", false},
	} {
		header := http.Header{"Tracestate": {"rojo=00f067aa0ba902b7"}}
		if c.traceparent != "" {
			header.Set("Traceparent", c.traceparent)
		}
		path := fmt.Sprintf("/echo/trace-%d", i)
		_, _, e := d.request(path, header)
		got, _ := one(t, e.Header, "Traceparent")
		state, hasState := one(t, e.Header, "Tracestate")
		traceID, spanID := "", ""
		if c.passed {
			if got != c.traceparent || state != "rojo=00f067aa0ba902b7" {
				t.Errorf("%q: the backend received %q and tracestate %q, want them unchanged", c.traceparent, got, state)
			}
			parts := strings.Split(got, "-")
			traceID, spanID = parts[1], parts[2]
		} else {
			m := made.FindStringSubmatch(got)
			if m == nil || m[1][:16] != m[2] || hasState {
				t.Errorf("%q: the backend received %q (tracestate %q), want one made of the request's ID and no tracestate", c.traceparent, got, state)
				continue
			}
			if seen[m[1]] {
				t.Errorf("trace ID %s made twice", m[1])
			}
			seen[m[1]] = true
			traceID, spanID = m[1], m[2]
		}
		d.eventually("the access log's line of "+path, func() bool { return strings.Contains(d.srv.Output(), path) })
		if want := fmt.Sprintf("trace_id=%s span_id=%s", traceID, spanID); !logLineHas(d.srv.Output(), path, want) {
			t.Errorf("%s: the access log's line does not end with %s", path, want)
		}
	}
}

func logLineHas(out, path, s string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, path) {
			return strings.HasSuffix(line, s)
		}
	}
	return false
}

// TestServerTokensAndWorkers: serverTokens on names NGINX's version in
// the Server header; workerProcesses is how many workers run, whatever the
// CPU limit; a workerRlimitNofile under what workerConnections need is
// raised to it.
func TestServerTokensAndWorkers(t *testing.T) {
	d := startProxyPlane(t, "serverTokens: \"on\"\nworkerProcesses: 3\nworkerConnections: 2048\nworkerRlimitNofile: 100")
	resp, _, _ := d.request("/none", nil)
	if got := resp.Header.Get("Server"); !regexp.MustCompile(`^nginx/1\.[0-9]+\.[0-9]+$`).MatchString(got) {
		t.Errorf("Server %q, want nginx/<version>", got)
	}
	if got := len(strings.Fields(d.workers())); got != 3 {
		t.Errorf("%d workers, want 3", got)
	}
	for _, pid := range strings.Fields(d.workers()) {
		limits := string(readFile(t, "/proc/"+pid+"/limits"))
		if !regexp.MustCompile(`Max open files\s+4160\s+4160`).MatchString(limits) {
			t.Errorf("worker %s's open files limit is not 2 × 2048 + 64:\n%s", pid, limits)
		}
	}
}
