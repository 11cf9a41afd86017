// Package auth tests authentication in a real NGINX: the configuration
// rendered by the manager's own pipeline for routes with
// AuthenticationFilters (Basic, with one user of every password hash
// format) and the Gateway API's ExternalAuth filter, served in private
// mount and network namespaces, with backends and an authorization service
// listening on loopback addresses inside them, and requests that must be
// let in or kept out.
package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
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

// gateway is the Gateway the tests' routes attach to, on port 80.
const gateway = `
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
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: authz, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
`

// renderGateway renders the one Gateway of the manifests with the
// manager's pipeline: its files, and its dynamic upstreams' IDs by name.
func renderGateway(t testing.TB, manifests string) ([]config.File, map[string]string) {
	t.Helper()
	files, ids, _ := renderWithKeys(t, manifests)
	return files, ids
}

// renderWithKeys is renderGateway, with the remote key sets the data plane
// fetches.
func renderWithKeys(t testing.TB, manifests string) ([]config.File, map[string]string, endpoints.KeySources) {
	t.Helper()
	objs, err := manifest.Decode([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	var warnings bytes.Buffer
	in, err := render.Decode(objs, manager.DefaultControllerName, "", &warnings)
	if err != nil || warnings.Len() > 0 {
		t.Fatalf("decoding the manifests: %v %s", err, warnings.String())
	}
	res := render.Render(in, metav1.Now())
	for gw, files := range res.Files {
		ids := map[string]string{}
		for id, up := range res.Endpoints[gw] {
			ids[up.Name] = id
		}
		return files, ids, res.KeySources[gw]
	}
	t.Fatal("the Gateway was not rendered")
	return nil, nil, nil
}

// dataPlane is one NGINX running a Gateway's configuration.
type dataPlane struct {
	t      testing.TB
	srv    *nginxtest.Server
	client *http.Client
	// ids are the dynamic upstreams' IDs by name; version numbers the
	// endpoint updates.
	ids     map[string]string
	version uint64
	set     endpoints.Set
}

// start serves files in a new NGINX, with ids the configuration's upstreams.
func start(t testing.TB, files []config.File, ids map[string]string) *dataPlane {
	t.Helper()
	return startWith(t, nginxtest.ServeOptions{Files: files}, ids)
}

// startWith serves as start does, with more options (its port is the
// readiness port).
func startWith(t testing.TB, o nginxtest.ServeOptions, ids map[string]string) *dataPlane {
	t.Helper()
	nginxtest.RequireRoot(t)
	o.Port = 8081
	srv, err := nginxtest.ServeWith(o)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataPlane{t: t, srv: srv, ids: ids}
	t.Cleanup(func() {
		out := srv.Stop()
		if t.Failed() {
			t.Logf("NGINX's output:\n%s", out)
		}
	})
	// No keep-alive: a reload's old workers would wait for our connections.
	d.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: srv.DialContext, DisableKeepAlives: true}}
	return d
}

// endpoints hands NGINX the endpoints of Services (by name, port 80), the
// others' upstreams having none.
func (d *dataPlane) endpoints(eps map[string][]string) {
	d.t.Helper()
	set := d.endpointSet(eps)
	d.version++
	u := endpoints.Snapshot(set, d.version)
	if d.set != nil {
		u = endpoints.Diff(d.set, set, d.version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	refused, err := d.srv.EndpointsClient().Apply(ctx, u, set)
	if err != nil || len(refused) > 0 {
		d.t.Fatalf("applying endpoints: %v, refused %v", err, refused)
	}
	d.set = set
}

// endpointSet is the set of the endpoints of Services (by name, port 80),
// the others' upstreams having none.
func (d *dataPlane) endpointSet(eps map[string][]string) endpoints.Set {
	d.t.Helper()
	set := endpoints.Set{}
	for name, id := range d.ids {
		set[id] = endpoints.Upstream{Name: name, Endpoints: []string{}}
	}
	for svc, addrs := range eps {
		name := "svc_ns_" + svc + "_80"
		id, ok := d.ids[name]
		if !ok {
			d.t.Fatalf("no upstream %s in the configuration", name)
		}
		set[id] = endpoints.Upstream{Name: name, Endpoints: addrs}
	}
	return set
}

// do sends a request to the Gateway's port and returns the answer with
// its body read.
func (d *dataPlane) do(req *http.Request) (*http.Response, string) {
	d.t.Helper()
	req.URL.Scheme, req.URL.Host = "http", "127.0.0.1:80"
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// request is a request for path with headers (name, value pairs).
func request(method, path, body string, headers ...string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://gateway"+path, r)
	if err != nil {
		panic(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// seen is what a server inside the data plane's namespace received.
type seen struct {
	Method, URI string
	Header      http.Header
	Body        string
}

// server is an HTTP server in the data plane's namespace that records the
// requests it gets; answer, when set, answers them (else 200 and the
// request as JSON).
type server struct {
	addr string
	srv  *http.Server
	mu   sync.Mutex
	got  []seen
	// answer writes the answer to a request; nil answers 200 with the
	// request as JSON.
	answer func(http.ResponseWriter, *http.Request)
}

func (d *dataPlane) server(ip string, answer func(http.ResponseWriter, *http.Request)) *server {
	d.t.Helper()
	l, err := d.srv.Listen("tcp", ip+":8080")
	if err != nil {
		d.t.Fatal(err)
	}
	s := &server{addr: l.Addr().String(), answer: answer}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got := seen{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: string(body)}
		got.Header.Set("Host", r.Host)
		if r.ContentLength >= 0 && r.Header.Get("Content-Length") == "" && len(r.TransferEncoding) == 0 {
			got.Header.Set("Content-Length", fmt.Sprint(r.ContentLength))
		}
		s.mu.Lock()
		s.got = append(s.got, got)
		s.mu.Unlock()
		if s.answer != nil {
			s.answer(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(got)
	})}
	go func() { _ = s.srv.Serve(l) }()
	d.t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// requests returns what the server received since the last call.
func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got
	s.got = nil
	return got
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
