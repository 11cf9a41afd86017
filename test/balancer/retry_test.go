package balancer

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// retryRoutes retry on the Service rr: /retry on 503 three times more,
// /retry-once on 500 and 503 once more.
const retryRoutes = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retries, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /retry}}]
    retry: {codes: [503], attempts: 3}
    timeouts: {request: 5s}
    backendRefs: [{name: rr, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /retry-once}}]
    retry: {codes: [500, 503], attempts: 1}
    backendRefs: [{name: rr, port: 80}]
`

// failing answers a request with ?id=X&fail=N&code=C with C for the first N
// requests of id X, then normally; tries counts them by id.
type failing struct {
	mu    sync.Mutex
	tries map[string]int
}

func (f *failing) status(r *http.Request) int {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	id := q.Get("id")
	f.tries[id]++
	n, _ := strconv.Atoi(q.Get("fail"))
	if code, _ := strconv.Atoi(q.Get("code")); code != 0 && f.tries[id] <= n {
		return code
	}
	return 0
}

func (f *failing) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tries[id]
}

// TestRetry: a route's retry passes a request whose try failed with a listed
// status to a try more, on the one endpoint again when the Service has one,
// at most attempts times more; other statuses, routes without a retry and
// POST requests once sent (NGINX never resends those) are not retried.
func TestRetry(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, retryRoutes))
	f := &failing{tries: map[string]int{}}
	b1 := d.backend("b1", "127.0.0.2")
	b1.status = f.status
	d.setEndpoints(only("rr", b1))
	for i, c := range []struct {
		method, path string
		fail, code   int
		want, tries  int
	}{
		{"GET", "/retry", 2, 503, 200, 3},
		{"GET", "/retry", 3, 503, 200, 4},
		{"GET", "/retry", 4, 503, 503, 4},
		{"GET", "/retry", 1, 500, 500, 1},         // not a listed status
		{"GET", "/retry-once", 1, 500, 200, 2},    // listed there
		{"GET", "/retry-once", 2, 503, 503, 2},    // one attempt more only
		{"GET", "/rr", 1, 503, 503, 1},            // no retry on the route
		{"POST", "/retry", 1, 503, 503, 1},        // sent: NGINX does not resend a POST
		{"HEAD", "/retry", 1, 503, 200, 2},        // idempotent
		{"DELETE", "/retry-once", 1, 503, 200, 2}, // idempotent
	} {
		id := fmt.Sprintf("case%d", i)
		got := d.send(c.method, fmt.Sprintf("%s?id=%s&fail=%d&code=%d", c.path, id, c.fail, c.code), nil, nil)
		if got != c.want || f.count(id) != c.tries {
			t.Errorf("%s %s failing %d times with %d: answered %d after %d tries, want %d after %d",
				c.method, c.path, c.fail, c.code, got, f.count(id), c.want, c.tries)
		}
	}
	if n := d.count("reload"); n != 0 {
		t.Errorf("%d reloads", n)
	}
}

// TestRetryHidesAFailingEndpoint: of two endpoints one answers 503 to every
// request; with the route's retry the clients see none of it.
func TestRetryHidesAFailingEndpoint(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, retryRoutes))
	good := d.backend("good", "127.0.0.2")
	bad := d.backend("bad", "127.0.0.3")
	bad.status = func(*http.Request) int { return http.StatusServiceUnavailable }
	d.setEndpoints(only("rr", good, bad))
	const n = 200
	failed := 0
	for i := 0; i < n; i++ {
		if got := d.route("/retry"); !strings.HasPrefix(got, "200") {
			failed++
		}
	}
	badTries, _ := bad.stats()
	if failed != 0 || badTries == 0 {
		t.Errorf("%d of %d requests failed; the failing endpoint had %d tries (want some: it is not avoided for answering 503)", failed, n, badTries)
	}
	// Without the retry, its share fails.
	failed = 0
	for i := 0; i < n; i++ {
		if got := d.route("/rr"); !strings.HasPrefix(got, "200") {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("without a retry no request failed: the test cannot tell")
	}
}

// TestRetriesBoundedByTheGateway: a route asking for ten retries on a
// Gateway whose NginxProxy allows two sends a failing request three times in
// all, not eleven: a route cannot make the Gateway an amplifier of one
// client request towards its backend (or an address outside the cluster an
// EndpointSlice names). Connection errors count among the three: an
// endpoint that refuses takes a try of them, not tries of its own.
func TestRetriesBoundedByTheGateway(t *testing.T) {
	bounded := strings.Replace(manifests, "  gatewayClassName: nginx\n",
		"  gatewayClassName: nginx\n  infrastructure: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: np}}\n", 1)
	if bounded == manifests {
		t.Fatal("the Gateway of the manifests changed: cannot give it an NginxProxy")
	}
	d := startDataPlane(t, renderManifests(t, bounded+`
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: np, namespace: ns}
spec: {upstreams: {maxRetries: 2}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: greedy, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /greedy}}]
    retry: {codes: [503], attempts: 10}
    backendRefs: [{name: rr, port: 80}]
`))
	f := &failing{tries: map[string]int{}}
	b1 := d.backend("b1", "127.0.0.2")
	b1.status = f.status
	d.setEndpoints(only("rr", b1))
	if got := d.send("GET", "/greedy?id=a&fail=100&code=503", nil, nil); got != 503 || f.count("a") != 3 {
		t.Errorf("a request failing every try: answered %d after %d tries, want 503 after 3", got, f.count("a"))
	}
	if got := d.send("GET", "/greedy?id=b&fail=2&code=503", nil, nil); got != 200 || f.count("b") != 3 {
		t.Errorf("a request failing twice: answered %d after %d tries, want 200 after 3", got, f.count("b"))
	}
	// Beside an endpoint that refuses connections, still three tries in
	// all: b1 sees the others.
	d.setEndpoints(addrSet("rr", b1.addr, "127.0.0.9:8080"))
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("c%d", i)
		d.send("GET", "/greedy?id="+id+"&fail=100&code=503", nil, nil)
		if n := f.count(id); n < 1 || n > 3 {
			t.Fatalf("request %s: %d tries on the answering endpoint, want 1 to 3 of 3 in all", id, n)
		}
	}
}

// TestLoopsAreCut: a route whose backend is the Gateway itself (an
// EndpointSlice naming the data plane's own address, as a Service selecting
// its pods would) gets 508 at the first turn instead of proxying to itself
// until no worker has a connection left; a request that passed through
// other Gateways goes on with this one's ID added, and one that passed
// through too many is refused.
func TestLoopsAreCut(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	b1 := d.backend("b1", "127.0.0.2")
	var seen []string
	var mu sync.Mutex
	b1.status = func(r *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Header.Get("X-Gatewall-Loop"))
		return 0
	}
	// rr's endpoint is NGINX's own listener.
	d.setEndpoints(addrSet("rr", "127.0.0.1:80"))
	before := d.settledCount(`"GET /rr/loop`)
	if got := d.send("GET", "/rr/loop", nil, nil); got != 508 {
		t.Errorf("a request to a route whose backend is the Gateway: %d, want 508", got)
	}
	d.eventually("both turns of the looping request logged", func() bool { return d.settledCount(`"GET /rr/loop`)-before >= 2 })
	if n := d.settledCount(`"GET /rr/loop`) - before; n != 2 {
		t.Errorf("NGINX served the looping request %d times, want 2 (the client's and the one turn)", n)
	}
	d.setEndpoints(only("rr", b1))
	h := http.Header{"X-Gatewall-Loop": {"0123456789abcdef"}}
	if got := d.send("GET", "/rr/a", h, nil); got != 200 {
		t.Fatalf("a request that passed through another Gateway: %d, want 200", got)
	}
	mu.Lock()
	last := seen[len(seen)-1]
	mu.Unlock()
	if !strings.HasPrefix(last, "0123456789abcdef,") || len(last) != 33 {
		t.Errorf("the backend got X-Gatewall-Loop %q, want the other Gateway's ID then this one's", last)
	}
	h = http.Header{"X-Gatewall-Loop": {strings.TrimSuffix(strings.Repeat("0123456789abcdef,", 16), ",")}}
	if got := d.send("GET", "/rr/b", h, nil); got != 200 {
		t.Errorf("a request that passed through 16 Gateways: %d, want 200", got)
	}
	h = http.Header{"X-Gatewall-Loop": {strings.TrimSuffix(strings.Repeat("0123456789abcdef,", 17), ",")}}
	if got := d.send("GET", "/rr/c", h, nil); got != 508 {
		t.Errorf("a request that passed through 17 Gateways: %d, want 508", got)
	}
}
