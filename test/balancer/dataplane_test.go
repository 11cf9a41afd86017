// Package balancer tests Gatewall's Lua balancer of dynamic endpoints in a
// real NGINX: the configuration rendered for a Gateway by the manager's own
// pipeline, the endpoints handed to it by the data plane's own endpoints
// client code (endpointfeed.NGINX), backends that answer, refuse, drop
// packets or answer slowly, and requests that must all succeed. The same
// harness checks what the rendered locations do with requests where a
// status claims it (bodysize_test.go: body limits on routes matched by a
// header, query parameter or method; headervalues_test.go and
// ngfheaders_test.go: header values and regular expressions carried to
// backends and clients exactly, NGF's header-filter and advanced-routing
// examples; clientaddress_test.go and nginxproxy_test.go: the NginxProxy's
// rewriteClientIP behind a load balancer or proxy, compression, the
// access log's format, forwarding headers, HTTP/2, trace context). Each
// NGINX runs in private mount and network namespaces (nothing touches the
// host's ports); the backends listen on loopback addresses inside them.
package balancer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// manifests is a Gateway with one route per load-balancing method, each
// to a Service of its own (the Services' endpoints come from the tests,
// through the endpoints client).
var manifests = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
` + routes

// methods are the Services and their UpstreamSettingsPolicy's method.
var methods = map[string]string{
	"rr": "", "lc": "least_conn", "ih": "ip_hash", "hk": "hash", "hc": "hash consistent", "rn": "random", "r2": "random two least_conn",
}

var routes = func() string {
	var b strings.Builder
	for svc, method := range methods {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %[1]s, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /%[1]s}}]
    backendRefs: [{name: %[1]s, port: 80}]
    timeouts: {request: 2s}
`, svc)
		if method != "" {
			key := ""
			if strings.HasPrefix(method, "hash") {
				key = "hashMethodKey: $request_uri"
			}
			fmt.Fprintf(&b, `---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: %[1]s, namespace: ns}
spec:
  targetRefs: [{group: "", kind: Service, name: %[1]s}]
  loadBalancingMethod: %[2]s
  %[3]s
`, svc, method, key)
		}
	}
	return b.String()
}()

// upstreamID is the ID of a Service's upstream.
func upstreamID(svc string) string {
	return config.UpstreamID(types.NamespacedName{Namespace: "ns", Name: svc}, 80)
}

// upstreamName is the name of a Service's upstream.
func upstreamName(svc string) string {
	return config.UpstreamName(types.NamespacedName{Namespace: "ns", Name: svc}, 80)
}

// dataPlane is one NGINX running the Gateway's configuration.
type dataPlane struct {
	t      testing.TB
	srv    *nginxtest.Server
	client *http.Client
	feed   *endpointfeed.NGINX
	// version numbers the updates handed to NGINX.
	version uint64
	set     endpoints.Set
}

func requireTools(t testing.TB) {
	t.Helper()
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"unshare", "nsenter", "ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: the balancer tests isolate NGINX in namespaces (util-linux, iproute2) and drop packets with iptables (make local-tools installs them)", tool)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("the balancer tests run NGINX in private namespaces and need root")
	}
}

// gwKey is the Gateway of manifests.
var gwKey = types.NamespacedName{Namespace: "ns", Name: "gw"}

// decodeInput is the manager's input of manifests and extra.
func decodeInput(t testing.TB, extra string) *graph.Input {
	t.Helper()
	return decodeText(t, manifests+extra)
}

// decodeText is the manager's input of text.
func decodeText(t testing.TB, text string) *graph.Input {
	t.Helper()
	in, err := Decode(text)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// renderFiles renders the Gateway with the manager's pipeline.
func renderFiles(t testing.TB, extra string) []config.File {
	t.Helper()
	return renderManifests(t, manifests+extra)
}

// renderManifests renders the one Gateway of text with the manager's pipeline.
func renderManifests(t testing.TB, text string) []config.File {
	t.Helper()
	files, err := RenderManifests(text)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// startDataPlane starts NGINX on files in its own namespaces and waits
// until it listens.
func startDataPlane(t testing.TB, files []config.File) *dataPlane {
	t.Helper()
	return startDataPlaneWithState(t, files, nil)
}

// startDataPlaneWithState starts NGINX as a pod's container restarted:
// the endpoints client's state file (state, unless nil) is in its run
// directory already.
func startDataPlaneWithState(t testing.TB, files []config.File, state []byte) *dataPlane {
	t.Helper()
	return startDataPlaneWith(t, nginxtest.ServeOptions{Files: files, EndpointsState: state})
}

// startDataPlaneWith starts NGINX with the options (its port is the
// readiness port).
func startDataPlaneWith(t testing.TB, o nginxtest.ServeOptions) *dataPlane {
	t.Helper()
	requireTools(t)
	o.Port = 8081
	srv, err := nginxtest.ServeWith(o)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataPlane{t: t, srv: srv, feed: srv.EndpointsClient()}
	t.Cleanup(func() {
		out := srv.Stop()
		if t.Failed() {
			t.Logf("NGINX's output:\n%s", out)
		}
	})
	d.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: srv.DialContext, MaxIdleConnsPerHost: 16}}
	return d
}

// get sends a GET to NGINX's port and returns the status and body.
func (d *dataPlane) get(path string, port int) (string, error) {
	resp, err := d.client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body))), nil
}

// route sends a request on the listener and returns "status body".
func (d *dataPlane) route(path string) string {
	d.t.Helper()
	got, err := d.get(path, 80)
	if err != nil {
		d.t.Fatalf("GET %s: %v", path, err)
	}
	return got
}

// setEndpoints hands the Gateway's endpoints to NGINX as the endpoints
// client does: the whole set first, then what changed.
func (d *dataPlane) setEndpoints(set endpoints.Set) {
	d.t.Helper()
	d.version++
	u := endpoints.Snapshot(set, d.version)
	if d.set != nil {
		u = endpoints.Diff(d.set, set, d.version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if refused, err := d.feed.Apply(ctx, u, set); err != nil || len(refused) > 0 {
		d.t.Fatalf("applying endpoints: %v (refused: %v)", err, refused)
	}
	d.set = set
}

// workers are the PIDs of NGINX's worker processes: a reload replaces them.
func (d *dataPlane) workers() string { return d.srv.Workers() }

// path is a path of NGINX's mount namespace, seen from the test's.
func (d *dataPlane) path(p string) string { return d.srv.Path(p) }

// count counts the lines of NGINX's output holding s.
func (d *dataPlane) count(s string) int { return strings.Count(d.srv.Output(), s) }

// settledCount is count once NGINX's output has stopped growing for a
// moment (at most 5 s): its logs reach the test through a pipe, the error
// log's line about a request possibly after the answer, the access log's
// always after it.
func (d *dataPlane) settledCount(s string) int {
	last, stable := d.srv.Output(), time.Now()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && time.Since(stable) < 200*time.Millisecond; {
		time.Sleep(20 * time.Millisecond)
		if out := d.srv.Output(); out != last {
			last, stable = out, time.Now()
		}
	}
	return strings.Count(last, s)
}

func (d *dataPlane) eventually(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			d.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// backend is an HTTP server inside the data plane's namespace, answering
// its name; delay, when set, makes it answer late.
type backend struct {
	name, addr string
	srv        *http.Server
	mu         sync.Mutex
	delay      time.Duration
	requests   int
	conns      map[string]bool
	inFlight   int
	// status, when set, gives the status to answer a request with (0: 200
	// and the backend's name).
	status func(*http.Request) int
}

func (d *dataPlane) backend(name, ip string) *backend {
	d.t.Helper()
	l, err := d.srv.Listen("tcp", ip+":8080")
	if err != nil {
		d.t.Fatal(err)
	}
	b := &backend{name: name, addr: l.Addr().String(), conns: map[string]bool{}}
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.requests++
		b.inFlight++
		b.conns[r.RemoteAddr] = true
		delay, status := b.delay, 0
		if b.status != nil {
			status = b.status(r)
		}
		b.mu.Unlock()
		time.Sleep(delay)
		b.mu.Lock()
		b.inFlight--
		b.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
		}
		fmt.Fprintln(w, name)
	})}
	go func() { _ = b.srv.Serve(l) }()
	d.t.Cleanup(func() { _ = b.srv.Close() })
	return b
}

func (b *backend) stats() (requests, conns int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests, len(b.conns)
}

// dropPackets makes ip drop every packet sent to it, as the address of a
// pod that is gone does.
func (d *dataPlane) dropPackets(ip string) {
	d.t.Helper()
	if err := d.srv.DropPacketsTo(ip); err != nil {
		d.t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
