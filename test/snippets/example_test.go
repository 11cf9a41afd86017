// Package snippets tests SnippetsFilters and SnippetsPolicies in a real
// NGINX: a scenario of the shape NGF's snippets guide uses, rendered by the
// manager's own pipeline with --snippets, served in private mount and
// network namespaces with backends listening inside them, does what that
// guide describes; a filter the allow-list refuses costs its own rule only.
package snippets

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// example is a Gateway with two routes, a SnippetsFilter allowing only GET
// on one and a SnippetsPolicy limiting each client to one connection on
// the Gateway (the kinds and fields NGF's snippets guide uses, in
// namespace default; Services without pods: the test's backends are their
// endpoints), and a third route whose filter the allow-list refuses.
const example = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway, namespace: default}
spec:
  gatewayClassName: nginx
  listeners:
    - name: http
      port: 80
      protocol: HTTP
      hostname: "*.example.com"
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: default}
spec: {ports: [{port: 80, targetPort: 8080, protocol: TCP, name: http}], selector: {app: orders}}
---
apiVersion: v1
kind: Service
metadata: {name: catalog, namespace: default}
spec: {ports: [{port: 80, targetPort: 8080, protocol: TCP, name: http}], selector: {app: catalog}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orders, namespace: default}
spec:
  parentRefs:
    - name: gateway
      sectionName: http
  hostnames:
    - "shop.example.com"
  rules:
    - matches:
        - path:
            type: PathPrefix
            value: /orders
      filters:
        - type: ExtensionRef
          extensionRef:
            group: gateway.nginx.org
            kind: SnippetsFilter
            name: get-only
      backendRefs:
        - name: orders
          port: 80
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: catalog, namespace: default}
spec:
  parentRefs:
    - name: gateway
      sectionName: http
  hostnames:
    - "shop.example.com"
  rules:
    - matches:
        - path:
            type: PathPrefix
            value: /catalog
      backendRefs:
        - name: catalog
          port: 80
---
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsPolicy
metadata: {name: one-per-client, namespace: default}
spec:
  targetRefs:
    - group: gateway.networking.k8s.io
      kind: Gateway
      name: gateway
  snippets:
    - context: http
      value: limit_conn_zone $binary_remote_addr zone=perclient:10m;
    - context: http.server.location
      value: limit_conn perclient 1;
---
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsFilter
metadata: {name: get-only, namespace: default}
spec:
  snippets:
    - context: http.server.location
      value: |
        limit_except GET {
          deny all;
        }
---
apiVersion: gateway.nginx.org/v1alpha1
kind: SnippetsFilter
metadata: {name: read-a-file, namespace: default}
spec:
  snippets:
    - context: http.server.location
      value: include /etc/nginx/nginx.conf;
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reports, namespace: default}
spec:
  parentRefs:
    - name: gateway
      sectionName: http
  hostnames:
    - "shop.example.com"
  rules:
    - matches:
        - path:
            type: PathPrefix
            value: /reports
      filters:
        - type: ExtensionRef
          extensionRef:
            group: gateway.nginx.org
            kind: SnippetsFilter
            name: read-a-file
      backendRefs:
        - name: catalog
          port: 80
`

// renderExample renders the example's Gateway with the manager's
// pipeline, snippets enabled: its files and its upstreams' IDs by name.
func renderExample(t *testing.T) ([]config.File, map[string]string) {
	t.Helper()
	objs, err := manifest.Decode([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	var warnings bytes.Buffer
	in, err := render.Decode(objs, manager.DefaultControllerName, "", &warnings)
	if err != nil || warnings.Len() > 0 {
		t.Fatalf("decoding the example: %v %s", err, warnings.String())
	}
	in.Snippets = true
	res := render.Render(in, metav1.Now())
	for gw, files := range res.Files {
		ids := map[string]string{}
		for id, up := range res.Endpoints[gw] {
			ids[up.Name] = id
		}
		return files, ids
	}
	t.Fatal("the Gateway was not rendered")
	return nil, nil
}

// TestNGFSnippetsExample: as NGF's snippets guide describes, the orders route's
// SnippetsFilter (limit_except GET { deny all; }) lets GET and HEAD
// through and answers 403 to POST, while catalog takes POST; the
// SnippetsPolicy's limit_conn perclient 1 lets a client have one request in
// progress at a time on every route (503 for a second), and another once
// the first is done. The route whose filter reads a file answers 500,
// and the others do not notice.
func TestNGFSnippetsExample(t *testing.T) {
	nginxtest.RequireRoot(t)
	files, ids := renderExample(t)
	srv, err := nginxtest.ServeWith(nginxtest.ServeOptions{Files: files, Port: 8081, Addrs: []string{"10.254.0.1/32"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out := srv.Stop(); t.Failed() {
			t.Logf("NGINX's output:\n%s", out)
		}
	})
	backend := newBackend(t, srv, "10.254.0.1:8080")
	set := endpoints.Set{}
	for name, id := range ids {
		set[id] = endpoints.Upstream{Name: name, Endpoints: []string{backend.addr}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if refused, err := srv.EndpointsClient().Apply(ctx, endpoints.Snapshot(set, 1), set); err != nil || len(refused) > 0 {
		t.Fatalf("applying endpoints: %v, refused %v", err, refused)
	}
	// Keep-alive: a request is over for limit_conn when NGINX frees it,
	// which on a connection kept alive is before it reads the next one;
	// on a connection the client closes it can be after the client's next
	// request arrived on another (lingering close), and that one would be
	// refused as a second in progress.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: srv.DialContext}}
	do := func(method, path string) int {
		t.Helper()
		req, err := http.NewRequest(method, "http://127.0.0.1:80"+path, strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "shop.example.com"
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/orders", 200},
		{"HEAD", "/orders", 200}, // limit_except GET allows HEAD too
		{"POST", "/orders", 403},
		{"DELETE", "/orders/beans", 403},
		{"POST", "/catalog", 200},
		{"GET", "/reports", 500},
		{"GET", "/catalog", 200},
	} {
		if got := do(c.method, c.path); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, got, c.want)
		}
	}

	// One request of the client in progress, held by the backend: a
	// second, on another route, is refused; once the first is answered,
	// the client may ask again.
	backend.hold()
	first := make(chan int, 1)
	go func() { first <- do("GET", "/orders") }()
	backend.waitHeld(t)
	if got := do("GET", "/catalog"); got != http.StatusServiceUnavailable {
		t.Errorf("a second request while one is in progress: %d, want 503 (limit_conn perclient 1)", got)
	}
	backend.release()
	if got := <-first; got != 200 {
		t.Errorf("the held request: %d, want 200", got)
	}
	if got := do("GET", "/catalog"); got != 200 {
		t.Errorf("a request once the first is done: %d, want 200", got)
	}
}

// backend answers 200, or holds requests until released.
type backend struct {
	addr string
	mu   sync.Mutex
	// gate, when set, holds requests until it is closed; held is told of
	// each request held.
	gate chan struct{}
	held chan struct{}
}

func newBackend(t *testing.T, srv *nginxtest.Server, addr string) *backend {
	t.Helper()
	l, err := srv.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{addr: l.Addr().String()}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		gate, held := b.gate, b.held
		b.mu.Unlock()
		if gate != nil {
			held <- struct{}{}
			<-gate
		}
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return b
}

func (b *backend) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate, b.held = make(chan struct{}), make(chan struct{}, 8)
}

func (b *backend) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-b.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the backend got no request to hold")
	}
}

func (b *backend) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.gate)
	b.gate = nil
}
