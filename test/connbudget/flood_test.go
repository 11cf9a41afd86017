// Package connbudget floods a real NGINX's TCP and UDP listeners, rendered
// by the manager's pipeline, and checks that the connection budget holds
// at run time: a tenant's listeners keep at most their l4.maxConnections
// (limit_conn), so the HTTP clients of another tenant, on the same NGINX
// workers, see no failure. The same flood on the configuration without
// the limits shows what they prevent. NGINX runs in private mount and
// network namespaces (root: `make test`); backends listen inside them.
package connbudget

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// manifests are a shared Gateway whose NginxProxy has spec (besides
// workerShutdownTimeout 1s: NGINX's old workers are kept 1s once it is
// told to stop, so a test ends soon): tenant "web" serves HTTP on port 80;
// tenant "games" adds, with a ListenerSet, a TCP and a UDP listener on
// port 5000 to backends of its own.
func manifests(spec string) string {
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: np, namespace: infra}
spec: {workerShutdownTimeout: 1s` + spec + `}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: nginx
  infrastructure:
    parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: np}
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: web}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: web, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [10.0.0.2]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: web}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: games, namespace: games}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners:
  - {name: tcp, port: 5000, protocol: TCP}
  - {name: udp, port: 5000, protocol: UDP}
---
apiVersion: v1
kind: Service
metadata: {name: lobby, namespace: games}
spec: {ports: [{name: tcp, port: 9000}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: lobby-1, namespace: games, labels: {kubernetes.io/service-name: lobby}}
addressType: IPv4
ports: [{name: tcp, port: 9000}]
endpoints: [{addresses: [10.0.0.3]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: lobby, namespace: games}
spec:
  parentRefs: [{kind: ListenerSet, name: games, sectionName: tcp}]
  rules: [{backendRefs: [{name: lobby, port: 9000}]}]
---
apiVersion: v1
kind: Service
metadata: {name: match, namespace: games}
spec: {ports: [{name: udp, port: 53, protocol: UDP}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: match-1, namespace: games, labels: {kubernetes.io/service-name: match}}
addressType: IPv4
ports: [{name: udp, port: 5353, protocol: UDP}]
endpoints: [{addresses: [10.0.0.4]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: match, namespace: games}
spec:
  parentRefs: [{kind: ListenerSet, name: games, sectionName: udp}]
  rules: [{backendRefs: [{name: match, port: 53}]}]
`
}

// The flood, as issue 39 measured it: UDP datagrams from as many source
// ports, and idle TCP connections held.
const (
	floodDatagrams = 3000
	idleTCP        = 600
	// maxConnections is each games listener's bound by default: the two
	// (TCP and UDP) share half of what workerConnections 1024 leaves after
	// the 64 kept for HTTP clients.
	maxConnections = (1024 - 64) / 4 / 2
)

// TestFloodedL4ListenersLeaveHTTPClientsAlone, with the defaults that
// matter here (workerConnections 1024, l4.maxConnections unset: 120 for
// each of the two listeners, two workers), floods the games tenant's UDP listener from thousands of
// source ports and holds hundreds of idle connections to its TCP
// listener, while HTTP clients of the web tenant send requests through
// the same NGINX: with the configuration Gatewall renders, every HTTP
// request succeeds, each games listener holds its limit of connections
// (the UDP flood does not take the TCP listener's, on the same port
// number), and the rest are turned away. Without the limits (the same
// configuration, limit_conn removed) the same flood makes NGINX fail HTTP
// requests ("worker_connections are not enough"): the case proves what
// the limits do.
func TestFloodedL4ListenersLeaveHTTPClientsAlone(t *testing.T) {
	nginxtest.RequireRoot(t)
	files, eps := renderGateway(t, "")
	if !strings.Contains(string(fileData(files, config.StreamConfPath)), fmt.Sprintf("limit_conn gatewall_l4_connections %d;", maxConnections)) {
		t.Fatalf("the stream context does not bound the listeners:\n%s", fileData(files, config.StreamConfPath))
	}

	with := flood(t, files, eps)
	t.Logf("with the limits: %d of %d HTTP requests failed; the TCP backend holds %d connections, the UDP backend saw %d sessions; NGINX logged %d \"worker_connections are not enough\", %d \"limiting connections\"",
		with.failed, with.requests, with.tcpHeld, with.udpSessions, with.notEnough, with.limited)
	if with.failed > 0 || with.requests < 100 {
		t.Errorf("%d of %d HTTP requests failed while the games listeners were flooded; want all of at least 100 to succeed (first failure: %s)", with.failed, with.requests, with.firstFailure)
	}
	if with.tcpHeld != maxConnections {
		t.Errorf("the TCP listener's backend holds %d connections; want its limit, %d (the UDP flood on the same port number must not take them)", with.tcpHeld, maxConnections)
	}
	if with.udpSessions == 0 || with.udpSessions > maxConnections {
		t.Errorf("the UDP listener's backend saw %d sessions; want at most its limit, %d, and some", with.udpSessions, maxConnections)
	}
	if with.notEnough > 0 {
		t.Errorf("NGINX ran out of worker connections %d times", with.notEnough)
	}

	stripped, _ := withoutLines(files, "limit_conn")
	without := flood(t, stripped, eps)
	t.Logf("without the limits: %d of %d HTTP requests failed; the TCP backend holds %d connections, the UDP backend saw %d sessions; NGINX logged %d \"worker_connections are not enough\"",
		without.failed, without.requests, without.tcpHeld, without.udpSessions, without.notEnough)
	if without.failed == 0 || without.notEnough == 0 {
		t.Errorf("without the limits, the flood failed %d HTTP requests (%d \"worker_connections are not enough\"): the test proves nothing", without.failed, without.notEnough)
	}
}

// TestIdleConnectionsAndSessionsEnd: a TCP connection idle either way for
// l4.tcpIdleTimeout is closed, freeing its place under the listener's
// l4.maxConnections, and one that keeps sending is not; a UDP listener
// whose sessions are all taken drops new clients' datagrams until
// sessions end, l4.udpSessionTimeout after their last datagram, and
// then serves new clients again.
func TestIdleConnectionsAndSessionsEnd(t *testing.T) {
	nginxtest.RequireRoot(t)
	const limit = 8
	files, eps := renderGateway(t, fmt.Sprintf(", l4: {maxConnections: %d, tcpIdleTimeout: 1s, udpSessionTimeout: 1s}", limit))
	d := start(t, files, eps)

	idle, err := d.srv.Dial("tcp", "127.0.0.1:5000")
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := d.srv.Dial("tcp", "127.0.0.1:5000")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for range 10 { // 2.5s: over twice the idle timeout
		if _, err := busy.Write([]byte("x")); err != nil {
			t.Fatalf("the connection that keeps sending was closed: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	_ = idle.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := idle.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the idle connection, after 2.5s: %v; want it closed by NGINX (EOF)", err)
	}
	_ = busy.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := busy.Read(make([]byte, 1)); !isTimeout(err) {
		t.Errorf("the connection that keeps sending, after 2.5s: %v; want it open", err)
	}

	for range 3 * limit {
		d.datagram(t)
	}
	time.Sleep(200 * time.Millisecond)
	if n := d.match.sessions(); n != limit {
		t.Fatalf("the UDP backend saw %d sessions of %d clients; want the limit, %d", n, 3*limit, limit)
	}
	time.Sleep(1500 * time.Millisecond) // the sessions' timeout, and more
	d.datagram(t)
	deadline := time.Now().Add(2 * time.Second)
	for d.match.sessions() == limit && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := d.match.sessions(); n != limit+1 {
		t.Errorf("once the sessions ended, a new client's datagram made the UDP backend see %d sessions; want %d", n, limit+1)
	}
}

// renderGateway renders the Gateway of manifests(spec) with the
// manager's pipeline.
func renderGateway(t *testing.T, spec string) ([]config.File, endpoints.Set) {
	t.Helper()
	objs, err := manifest.Decode([]byte(manifests(spec)))
	if err != nil {
		t.Fatal(err)
	}
	var warnings bytes.Buffer
	in, err := render.Decode(objs, manager.DefaultControllerName, "", &warnings)
	if err != nil || warnings.Len() > 0 {
		t.Fatalf("decoding the manifests: %v %s", err, warnings.String())
	}
	res := render.Render(in, metav1.Now())
	key := types.NamespacedName{Namespace: "infra", Name: "gw"}
	files, ok := res.Files[key]
	if !ok {
		t.Fatalf("the Gateway was not rendered: %+v", res.Statuses)
	}
	return files, res.Endpoints[key]
}

// result is what one flood did.
type result struct {
	requests, failed     int64
	firstFailure         string
	tcpHeld, udpSessions int
	notEnough, limited   int
}

// dataPlane is NGINX serving the Gateway, with the tenants' backends.
type dataPlane struct {
	srv    *nginxtest.Server
	client *http.Client
	// lobby holds the TCP listener's connections, match receives the UDP
	// listener's datagrams.
	lobby *holder
	match *sink
	once  sync.Once
}

// stop stops NGINX (once), and shows its output when the test failed.
func (d *dataPlane) stop(t *testing.T) {
	d.once.Do(func() {
		out := d.srv.Stop()
		if t.Failed() {
			t.Logf("NGINX's output (last 2000 bytes):\n%s", out[max(0, len(out)-2000):])
		}
	})
}

// start serves files with real NGINX and the backends, until the test
// ends; the web tenant's route answers.
func start(t *testing.T, files []config.File, eps endpoints.Set) *dataPlane {
	t.Helper()
	srv, err := nginxtest.Serve(files, 80, "10.0.0.2/32", "10.0.0.3/32", "10.0.0.4/32")
	if err != nil {
		t.Fatal(err)
	}
	d := &dataPlane{srv: srv}
	t.Cleanup(func() { d.stop(t) })
	web := httpBackend(t, srv, "10.0.0.2:8080")
	t.Cleanup(func() { _ = web.Close() })
	d.lobby = holdingBackend(t, srv, "10.0.0.3:9000")
	t.Cleanup(d.lobby.close)
	d.match = silentBackend(t, srv, "10.0.0.4:5353")
	t.Cleanup(d.match.close)
	if err := srv.SetEndpoints(eps); err != nil {
		t.Fatal(err)
	}
	d.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: srv.DialContext, DisableKeepAlives: true}}
	if code, err := get(d.client); err != nil || code != http.StatusOK {
		t.Fatalf("the web tenant's route answers %d, %v", code, err)
	}
	return d
}

// datagram sends one datagram to the UDP listener from a port of its own.
func (d *dataPlane) datagram(t *testing.T) {
	t.Helper()
	c, err := d.srv.Dial("udp", "127.0.0.1:5000")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("ping"))
	c.Close()
}

// flood floods the games listeners of NGINX serving files while HTTP
// clients send requests, and says what happened.
func flood(t *testing.T, files []config.File, eps endpoints.Set) result {
	t.Helper()
	d := start(t, files, eps)
	// The next flood runs on its own.
	defer d.stop(t)
	srv, client, lobby, match := d.srv, d.client, d.lobby, d.match

	var res result
	var firstFailure atomic.Value
	stop := make(chan struct{})
	var clients sync.WaitGroup
	stopClients := sync.OnceFunc(func() { close(stop); clients.Wait() })
	defer stopClients() // also when the test stops early
	for range 8 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, err := get(client)
				atomic.AddInt64(&res.requests, 1)
				if err != nil || code != http.StatusOK {
					atomic.AddInt64(&res.failed, 1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %v", code, err))
				}
			}
		}()
	}

	// UDP first: its sessions are held while the TCP listener, on the
	// same port number, takes its connections.
	for range floodDatagrams {
		d.datagram(t)
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range idleTCP {
		c, err := srv.Dial("tcp", "127.0.0.1:5000")
		if err != nil {
			t.Fatalf("TCP connection %d: %v", i, err)
		}
		held = append(held, c)
	}
	// The clients keep going while the flood holds its connections.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && lobby.count() < maxConnections {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stopClients()
	if f := firstFailure.Load(); f != nil {
		res.firstFailure = f.(string)
	}
	res.tcpHeld, res.udpSessions = lobby.count(), match.sessions()
	out := srv.Output()
	res.notEnough = strings.Count(out, "worker_connections are not enough")
	res.limited = strings.Count(out, "limiting connections")
	return res
}

func get(c *http.Client) (int, error) {
	resp, err := c.Get("http://127.0.0.1:80/")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// httpBackend answers every request with 200.
func httpBackend(t *testing.T, srv *nginxtest.Server, addr string) *http.Server {
	t.Helper()
	l, err := srv.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "web") })}
	go func() { _ = s.Serve(l) }()
	return s
}

// holder accepts TCP connections and keeps them open, reading nothing.
type holder struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func holdingBackend(t *testing.T, srv *nginxtest.Server, addr string) *holder {
	t.Helper()
	l, err := srv.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h := &holder{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	return h
}

// count is how many of the connections it accepted are still open.
func (h *holder) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	open := 0
	for _, c := range h.conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			continue // closed by NGINX
		}
		open++
	}
	return open
}

func (h *holder) close() {
	h.l.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sink receives datagrams and answers none, so that each session NGINX
// opens lasts its timeout; it counts NGINX's sessions by their source ports.
type sink struct {
	c    net.PacketConn
	mu   sync.Mutex
	from map[string]bool
}

func silentBackend(t *testing.T, srv *nginxtest.Server, addr string) *sink {
	t.Helper()
	c, err := srv.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{c: c, from: map[string]bool{}}
	go func() {
		buf := make([]byte, 2048)
		for {
			_, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.from[from.String()] = true
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *sink) sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.from)
}

func (s *sink) close() { s.c.Close() }

func fileData(files []config.File, path string) []byte {
	for _, f := range files {
		if f.Path == path {
			return f.Data
		}
	}
	return nil
}

// withoutLines removes the lines holding word.
func withoutLines(files []config.File, word string) ([]config.File, bool) {
	out := make([]config.File, 0, len(files))
	removed := false
	for _, f := range files {
		var kept [][]byte
		for _, line := range bytes.Split(f.Data, []byte("\n")) {
			if bytes.Contains(line, []byte(word)) {
				removed = true
				continue
			}
			kept = append(kept, line)
		}
		f.Data = bytes.Join(kept, []byte("\n"))
		out = append(out, f)
	}
	return out, removed
}
