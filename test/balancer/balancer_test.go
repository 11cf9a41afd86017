package balancer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// only is a set where svc's upstream has eps and every other Service's none.
func only(svc string, eps ...*backend) endpoints.Set {
	set := endpoints.Set{}
	for s := range methods {
		set[upstreamID(s)] = endpoints.Upstream{Name: upstreamName(s), Endpoints: []string{}}
	}
	var addrs []string
	for _, b := range eps {
		addrs = append(addrs, b.addr)
	}
	set[upstreamID(svc)] = endpoints.Upstream{Name: upstreamName(svc), Endpoints: addrs}
	return set
}

// addrSet is like only, with addresses.
func addrSet(svc string, addrs ...string) endpoints.Set {
	set := only(svc)
	set[upstreamID(svc)] = endpoints.Upstream{Name: upstreamName(svc), Endpoints: addrs}
	return set
}

// spread sends n requests to path and counts the answers.
func (d *dataPlane) spread(path string, n int) map[string]int {
	d.t.Helper()
	got := map[string]int{}
	for i := 0; i < n; i++ {
		got[d.route(path)]++
	}
	return got
}

// TestReadyOnlyWithEndpoints: a new NGINX answers the readiness probe only
// once its endpoints arrived, so that a new pod serves its first request
// with them; an upstream without endpoints answers 503.
func TestReadyOnlyWithEndpoints(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	if got, _ := d.get("/readyz", 8081); !strings.HasPrefix(got, "503") {
		t.Errorf("readiness before any endpoints: %s, want 503", got)
	}
	if got := d.route("/rr"); !strings.HasPrefix(got, "503") {
		t.Errorf("a route before any endpoints: %s, want 503", got)
	}
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(only("rr", b1))
	if got, _ := d.get("/readyz", 8081); !strings.HasPrefix(got, "204") {
		t.Errorf("readiness with endpoints: %s, want 204", got)
	}
	if got := d.route("/rr"); got != "200 b1" {
		t.Errorf("got %s, want b1", got)
	}
	if got := d.route("/lc"); !strings.HasPrefix(got, "503") {
		t.Errorf("a Service without endpoints: %s, want 503", got)
	}
}

// TestEndpointChangesWithoutReload: rollouts and scaling change what
// requests reach at once, with the same NGINX workers (no reload), and
// requests spread over every endpoint.
func TestEndpointChangesWithoutReload(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	var bs []*backend
	for i := 0; i < 6; i++ {
		bs = append(bs, d.backend(fmt.Sprintf("b%d", i), fmt.Sprintf("127.0.0.%d", 10+i)))
	}
	d.setEndpoints(only("rr", bs[0], bs[1], bs[2]))
	workers := d.workers()
	for step, eps := range [][]*backend{{bs[1], bs[2], bs[3]}, {bs[3], bs[4], bs[5]}, {bs[5]}, {}, {bs[0], bs[5]}} {
		d.setEndpoints(only("rr", eps...))
		got := d.spread("/rr", 6*len(eps)+1)
		if len(eps) == 0 {
			if got["503 "] == 0 && len(got) != 1 {
				t.Errorf("step %d: scaled to zero: %v, want only 503", step, got)
			}
			continue
		}
		for _, b := range eps {
			if got["200 "+b.name] < 2 {
				t.Errorf("step %d: %s got %d of the requests: %v", step, b.name, got["200 "+b.name], got)
			}
		}
		if len(got) != len(eps) {
			t.Errorf("step %d: answers %v, want only %d endpoints'", step, got, len(eps))
		}
	}
	if now := d.workers(); now != workers || workers == "" {
		t.Errorf("NGINX's workers changed from %q to %q: it reloaded", workers, now)
	}
}

// TestRefusedEndpointCostsOneTry: an endpoint that refuses connections (its
// process exited) costs a request only another try, and is then avoided by
// every worker.
func TestRefusedEndpointCostsOneTry(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(addrSet("rr", "127.0.0.3:8080", b1.addr)) // nothing listens on 127.0.0.3
	for i, got := range d.spread("/rr", 40) {
		if i != "200 b1" {
			t.Errorf("%d answers %q, want every request answered by b1", got, i)
		}
	}
	if n := d.settledCount("connect() failed (111: Connection refused)"); n < 1 || n > 2 {
		t.Errorf("the refusing endpoint was tried %d times; want once per worker at most", n)
	}
}

// TestRefusedIPv6EndpointCostsOneTry: as TestRefusedEndpointCostsOneTry,
// with IPv6 endpoints written as the manager does not (zero groups
// spelled out, upper case): the balancer knows the endpoint a request
// tried from NGINX's own spelling of it ($upstream_addr) when NGINX calls
// again, and marks that one failed.
func TestRefusedIPv6EndpointCostsOneTry(t *testing.T) {
	d := startDataPlaneWith(t, nginxtest.ServeOptions{Files: renderFiles(t, ""), Addrs: []string{"fd00::2/128 nodad", "fd00::3/128 nodad"}})
	b1 := d.backend("b1", "[fd00::2]")
	d.setEndpoints(addrSet("rr", "[FD00:0:0:0::3]:8080", "[fd00:0::2]:8080")) // nothing listens on fd00::3
	for i, got := range d.spread("/rr", 40) {
		if i != "200 b1" {
			t.Errorf("%d answers %q, want every request answered by b1 (%s)", got, i, b1.addr)
		}
	}
	if n := d.settledCount("connect() failed (111: Connection refused)"); n < 1 || n > 2 {
		t.Errorf("the refusing endpoint was tried %d times; want once per worker at most", n)
	}
}

// TestBlackHoledEndpointCostsOneConnectTimeout: an endpoint whose packets
// are dropped (its pod is gone) holds a request for the connect timeout
// only, then the request goes to another endpoint, and later requests
// avoid it.
func TestBlackHoledEndpointCostsOneConnectTimeout(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	b1 := d.backend("b1", "127.0.0.2")
	d.backend("gone", "127.0.0.4")
	d.dropPackets("127.0.0.4")
	d.setEndpoints(addrSet("rr", "127.0.0.4:8080", b1.addr))
	var slowest time.Duration
	for i := 0; i < 30; i++ {
		start := time.Now()
		if got := d.route("/rr"); got != "200 b1" {
			t.Errorf("request %d: %s, want b1", i, got)
		}
		slowest = max(slowest, time.Since(start))
	}
	if n := d.settledCount("upstream timed out (110: Connection timed out) while connecting"); n < 1 || n > 2 {
		t.Errorf("the black-holed endpoint was tried %d times; want once per worker at most", n)
	}
	// The bound is the connect timeout (250 ms): generous here, for a
	// loaded machine; the churn harness measures it.
	if slowest > time.Second {
		t.Errorf("the slowest request took %v", slowest)
	}
}

// TestSlowAnswerDoesNotTakeTheEndpointOut: a request that times out
// waiting for an answer (one route's slow request) does not make every
// route avoid the endpoint, as a failed connection does.
func TestSlowAnswerDoesNotTakeTheEndpointOut(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	slow, b2 := d.backend("slow", "127.0.0.2"), d.backend("b2", "127.0.0.3")
	slow.delay = 3 * time.Second // the route's timeout is 2 s
	d.setEndpoints(only("rr", slow))
	if got := d.route("/rr"); !strings.HasPrefix(got, "504") {
		t.Fatalf("a request past the route's timeout: %s, want 504", got)
	}
	slow.mu.Lock()
	slow.delay = 0
	slow.mu.Unlock()
	d.setEndpoints(only("rr", slow, b2))
	if got := d.spread("/rr", 10); got["200 slow"] < 3 {
		t.Errorf("after its slow answer the endpoint got %v; want it still used", got)
	}
}

// TestKeepAliveConnectionsAreReused: the upstream's keep-alive pool keeps
// connections to the endpoints the balancer picks.
func TestKeepAliveConnectionsAreReused(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(only("rr", b1))
	d.spread("/rr", 40)
	if requests, conns := b1.stats(); requests != 40 || conns > 2 {
		t.Errorf("40 requests came on %d connections (%d requests); want at most one per worker", conns, requests)
	}
}

// holdOne starts a request to path that b holds (its delay) and returns
// when b has it in flight; the returned wait ends with the request.
func (d *dataPlane) holdOne(path string, b *backend) func() {
	d.t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = d.get(path, 80)
	}()
	d.eventually("the held request", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.inFlight == 1 })
	return wg.Wait
}

// TestLeastConnections: least_conn and random two least_conn send new
// requests to the endpoint with fewer requests in flight.
func TestLeastConnections(t *testing.T) {
	for _, svc := range []string{"lc", "r2"} {
		t.Run(methods[svc], func(t *testing.T) {
			d := startDataPlane(t, renderFiles(t, ""))
			busy, free := d.backend("busy", "127.0.0.2"), d.backend("free", "127.0.0.3")
			busy.delay = 2 * time.Second
			d.setEndpoints(only(svc, busy))
			wait := d.holdOne("/"+svc, busy)
			d.setEndpoints(only(svc, busy, free))
			if got := d.spread("/"+svc, 10); got["200 free"] != 10 {
				t.Errorf("with a request held by busy: %v; want every new request to free", got)
			}
			wait()
		})
	}
}

// TestHashMethods: a key goes to the same endpoint every time; with hash
// consistent, an endpoint going away moves only its own keys; ip_hash keeps
// a client on one endpoint.
func TestHashMethods(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	var bs []*backend
	for i := 0; i < 4; i++ {
		bs = append(bs, d.backend(fmt.Sprintf("b%d", i), fmt.Sprintf("127.0.0.%d", 20+i)))
	}
	set := only("hc", bs...)
	for _, svc := range []string{"hk", "ih"} {
		set[upstreamID(svc)] = only(svc, bs...)[upstreamID(svc)]
	}
	d.setEndpoints(set)
	for _, svc := range []string{"hk", "hc"} {
		first := map[string]string{}
		for i := 0; i < 30; i++ {
			first[fmt.Sprint(i)] = d.route(fmt.Sprintf("/%s/key-%d", svc, i))
		}
		for k, want := range first {
			if got := d.route("/" + svc + "/key-" + k); got != want {
				t.Errorf("%s: key %s went to %s, then to %s", svc, k, want, got)
			}
		}
		if spread := len(values(first)); spread < 3 {
			t.Errorf("%s: 30 keys went to %d endpoints", svc, spread)
		}
	}
	before := map[int]string{}
	for i := 0; i < 60; i++ {
		before[i] = d.route(fmt.Sprintf("/hc/key-%d", i))
	}
	set[upstreamID("hc")] = only("hc", bs[0], bs[1], bs[2])[upstreamID("hc")]
	d.setEndpoints(set)
	moved := 0
	for i := 0; i < 60; i++ {
		got := d.route(fmt.Sprintf("/hc/key-%d", i))
		if before[i] != "200 b3" && got != before[i] {
			moved++
		}
		if got == "200 b3" {
			t.Errorf("key %d still goes to the removed endpoint", i)
		}
	}
	if moved > 0 {
		t.Errorf("hash consistent: %d keys of the remaining endpoints moved when another went away", moved)
	}
	if got := d.spread("/ih", 20); len(got) != 1 {
		t.Errorf("ip_hash: one client went to %v", got)
	}
}

func values(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

// TestRefusedUpdateChangesNothing: an update NGINX's Lua refuses (which
// the client also refuses before sending it) leaves the endpoints in force:
// one whose form is wrong, whole; an upstream with an invalid endpoint,
// that upstream.
func TestRefusedUpdateChangesNothing(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(only("rr", b1))
	bad := endpoints.Update{Version: 9, Set: endpoints.Set{"not an ID": {Endpoints: []string{"10.0.0.1:80"}}, upstreamID("rr"): {}}}
	if _, err := d.feed.Apply(context.Background(), bad, nil); !errors.Is(err, endpointfeed.ErrRejected) {
		t.Fatalf("NGINX took an update with an invalid ID: %v", err)
	}
	if got := d.route("/rr"); got != "200 b1" {
		t.Errorf("after a refused update: %s, want b1 still", got)
	}
	bad = endpoints.Update{Version: 10, Set: endpoints.Set{upstreamID("rr"): {Endpoints: []string{`10.0.0.1:80"); os.exit(1) --`}}}}
	refused, err := d.feed.Apply(context.Background(), bad, nil)
	if err != nil || !strings.Contains(refused[upstreamID("rr")], "invalid endpoint") {
		t.Fatalf("NGINX took an upstream with an invalid endpoint: %v %v", refused, err)
	}
	if got := d.route("/rr"); got != "200 b1" {
		t.Errorf("after a refused upstream: %s, want b1 still", got)
	}
}

// TestIPv4MappedEndpointsRefused: NGINX's Lua refuses an IPv4-mapped IPv6
// endpoint in any of its forms, as the client does (the manager writes
// them as IPv4): a connection to [::ffff:0.0.0.0] reaches the pod's own
// listeners.
func TestIPv4MappedEndpointsRefused(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(only("rr", b1))
	for _, ep := range []string{"[::ffff:0.0.0.0]:8081", "[::FFFF:127.0.0.1]:8081", "[0:0:0:0:0:ffff:7f00:1]:8081", "[::ffff:7f00:2]:8080", "[::127.0.0.2]:8080"} {
		bad := endpoints.Update{Version: 9, Set: endpoints.Set{upstreamID("rr"): {Endpoints: []string{ep}}}}
		if refused, err := d.feed.Apply(context.Background(), bad, nil); len(refused) != 1 || err != nil {
			t.Errorf("NGINX took the endpoint %s: %v %v", ep, refused, err)
		}
		if got := d.route("/rr"); got != "200 b1" {
			t.Errorf("after the endpoint %s: %s, want b1 still", ep, got)
		}
	}
}

// TestRestartedNGINXServesItsLastEndpoints: an NGINX that starts again in a
// pod (a crash, a container restart) loads the endpoints the client kept
// in the state file: it is ready and serves them before the client
// reconnects.
func TestRestartedNGINXServesItsLastEndpoints(t *testing.T) {
	files := renderFiles(t, "")
	d := startDataPlane(t, files)
	b1 := d.backend("b1", "127.0.0.2")
	d.setEndpoints(only("rr", b1))
	state := readFile(t, d.path(endpoints.StateFile))
	again := startDataPlaneWithState(t, files, state)
	if got, _ := again.get("/readyz", 8081); !strings.HasPrefix(got, "204") {
		t.Errorf("readiness of the restarted NGINX: %s, want 204", got)
	}
	again.backend("b1", "127.0.0.2")
	if got := again.route("/rr"); got != "200 b1" {
		t.Errorf("the restarted NGINX answers %s, want b1", got)
	}
}
