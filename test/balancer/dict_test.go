package balancer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/endpoints"
)

// BenchmarkEndpointsDict measures what the data plane's endpoints dict (32
// MB, shared by a Gateway's tenants) holds, at the worst, through the real
// control socket: the figures chose the bounds in package endpoints
// (docs/budgets.md). Its parts:
//
//   - fill: upstreams of k endpoints are added until the dict refuses one,
//     every endpoint the longest IPv6 address; the k are the list sizes the
//     dict's slab allocator rounds up the most (a list of 41 takes two
//     pages where 2,069 bytes were asked).
//   - churn: the bounds' worth of upstreams and endpoints, then many
//     updates of many upstreams to new addresses and sizes, the total kept
//     within the bounds: what fragmentation does over time. Any refusal
//     at the bounds means they are too high; twice and thrice them say how
//     much room they leave.
//   - marks: what one endpoint's failure mark takes of the balancer dict.
//
// Run it with
//
//	go test ./test/balancer -run '^$' -bench EndpointsDict -benchtime 1x
func BenchmarkEndpointsDict(b *testing.B) {
	for _, k := range []int{1, 4, 9, 20, 41, 86, 171, 342, 683, 1000} {
		b.Run(fmt.Sprintf("fill/k=%d", k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				fillDict(b, k)
			}
		})
	}
	// At the bounds, nothing may be refused; at twice and thrice them,
	// what is refused says how much room the bounds leave.
	for _, times := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("churn/bounds*%d", times), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				refusals := churnDict(b, times*endpoints.MaxUpstreams, times*endpoints.MaxEndpoints, endpoints.MaxEndpointsPerUpstream, 1000)
				if times == 1 && refusals > 0 {
					b.Errorf("the dict refused %d upstreams within the bounds", refusals)
				}
			}
		})
	}
	b.Run("marks", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			measureMarks(b, endpoints.MaxEndpointsPerUpstream)
		}
	})
}

// longEndpoint is the n-th of distinct endpoints of the longest form:
// eight groups of four hex digits, and a port of five.
func longEndpoint(n int) string {
	return fmt.Sprintf("[fd00:ffff:ffff:ffff:ffff:ffff:%04x:%04x]:65535", 0x1000+n/0xe000%0xe000, 0x1000+n%0xe000)
}

func longEndpoints(from, k int) []string {
	eps := make([]string, k)
	for i := range eps {
		eps[i] = longEndpoint(from + i)
	}
	return eps
}

func dictID(n int) string { return fmt.Sprintf("d%031x", n) }

// dictStatus is the control socket's answer to GET.
type dictStatus struct {
	Free         int64 `json:"free"`
	BalancerFree int64 `json:"balancer_free"`
}

func (d *dataPlane) dictStatus() dictStatus {
	d.t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "unix", d.path(endpoints.Socket))
	}}}
	resp, err := c.Get("http://nginx" + endpoints.ControlPath)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st dictStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		d.t.Fatal(err)
	}
	return st
}

// apply hands NGINX an update without the state file (the measurements
// need only NGINX) and returns what it refused.
func (d *dataPlane) apply(u endpoints.Update) map[string]string {
	d.t.Helper()
	d.version++
	u.Version = d.version
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	refused, err := d.feed.Apply(ctx, u, nil)
	if err != nil {
		d.t.Fatalf("update %d: %v", u.Version, err)
	}
	return refused
}

func fillDict(b *testing.B, k int) {
	d := startDataPlane(b, renderFiles(b, ""))
	held, n := 0, 0
	for batch := max(1, 20000/k); ; {
		u := endpoints.Update{Set: endpoints.Set{}}
		for i := 0; i < batch; i++ {
			u.Set[dictID(n+i)] = endpoints.Upstream{Endpoints: longEndpoints((n+i)*k, k)}
		}
		refused := d.apply(u)
		held += batch - len(refused)
		n += batch
		if len(refused) > 0 {
			break
		}
	}
	b.ReportMetric(float64(held), "upstreams")
	b.ReportMetric(float64(held*k), "endpoints")
	b.ReportMetric(float64(held*(k*len(longEndpoint(0))+k-1))/(1<<20), "content-MiB")
	b.ReportMetric(float64(d.dictStatus().Free)/(1<<20), "free-MiB")
}

// churnSizes are list sizes the slab allocator rounds up the most (about
// twice what they need), and none.
var churnSizes = []int{0, 4, 9, 20, 41, 86, 171, 342, 683}

// churnDict holds upstreams upstreams with eps endpoints between them (at
// most most each), then changes 50 of them at a time, rounds times, to
// random sizes, the total kept within eps, and returns how many upstreams
// the dict refused.
func churnDict(b *testing.B, upstreams, eps, most, rounds int) int {
	d := startDataPlane(b, renderFiles(b, ""))
	r := rand.New(rand.NewSource(1))
	sizes := append(append([]int(nil), churnSizes...), most)
	size := make([]int, upstreams)
	total, next := 0, 0
	// Start full, and at the worst: every upstream with 9 endpoints (a
	// kilobyte for 533 bytes), until the endpoints run out; in updates
	// NGINX takes.
	refusals := 0
	for from := 0; from < upstreams; from += 1000 {
		u := endpoints.Update{Set: endpoints.Set{}}
		for i := from; i < min(from+1000, upstreams); i++ {
			size[i] = min(9, eps-total)
			total += size[i]
			u.Set[dictID(i)] = endpoints.Upstream{Endpoints: longEndpoints(next, size[i])}
			next += size[i]
		}
		refusals += len(d.apply(u))
	}
	minFree := d.dictStatus().Free
	for round := 0; round < rounds; round++ {
		u := endpoints.Update{Set: endpoints.Set{}}
		for c := 0; c < 50; c++ {
			i := r.Intn(upstreams)
			want := sizes[r.Intn(len(sizes))]
			if total-size[i]+want > eps {
				want = size[i] + (eps - total) // what is left, growing to it
			}
			if r.Intn(4) == 0 {
				want = most // the largest, often: they need pages in a row
				if total-size[i]+want > eps {
					continue
				}
			}
			total += want - size[i]
			size[i] = want
			// New addresses: a rollout replaces every endpoint.
			u.Set[dictID(i)] = endpoints.Upstream{Endpoints: longEndpoints(next, want)}
			next += want
		}
		refused := d.apply(u)
		refusals += len(refused)
		if len(refused) > 0 && refusals == len(refused) {
			ids := make([]string, 0, len(refused))
			for id, why := range refused {
				ids = append(ids, id+": "+why)
			}
			sort.Strings(ids)
			b.Logf("first refusal: round %d, %d endpoints: %s", round, total, strings.Join(ids, "; "))
		}
		if f := d.dictStatus().Free; f < minFree {
			minFree = f
		}
	}
	b.ReportMetric(float64(refusals), "refusals")
	b.ReportMetric(float64(minFree)/(1<<20), "min-free-MiB")
	return refusals
}

// measureMarks has n endpoints of one upstream fail (nothing listens on
// them) and measures what their failure marks take of the balancer dict.
func measureMarks(b *testing.B, n int) {
	d := startDataPlane(b, renderFiles(b, ""))
	eps := make([]string, n)
	for i := range eps {
		eps[i] = fmt.Sprintf("127.0.1.1:%d", 10000+i)
	}
	set := only("rr")
	set[upstreamID("rr")] = endpoints.Upstream{Name: upstreamName("rr"), Endpoints: eps}
	d.setEndpoints(set)
	before := d.dictStatus().BalancerFree
	// Each request tries three endpoints; the balancer marks a try when
	// NGINX asks it for the next: two marks a request.
	for i := 0; i < n; i++ {
		d.route("/rr")
	}
	used := before - d.dictStatus().BalancerFree
	b.ReportMetric(float64(strings.Count(d.srv.Output(), "connect() failed")), "failed-connections")
	b.ReportMetric(float64(used)/float64(n), "bytes/mark")
}

// TestOversizedUpdateIsRefusedOnce: NGINX refuses a body over the bound of
// an update before any Lua reads it, and the client refuses to send one:
// at once, without trying again (NGINX would answer the same).
func TestOversizedUpdateIsRefusedOnce(t *testing.T) {
	d := startDataPlane(t, renderFiles(t, ""))
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, "unix", d.path(endpoints.Socket))
	}}}
	resp, err := c.Post("http://nginx"+endpoints.ControlPath, "application/json", strings.NewReader(strings.Repeat(" ", endpoints.MaxUpdateBytes+1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the bound: %s, want 413", resp.Status)
	}
	big := endpoints.Update{Version: 1, Full: true, Set: endpoints.Set{}}
	for i := 0; i < 150; i++ {
		big.Set[dictID(i)] = endpoints.Upstream{Endpoints: longEndpoints(i*1000, 1000)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := d.feed.Apply(ctx, big, nil); !errors.Is(err, endpointfeed.ErrRejected) || time.Since(start) > time.Second {
		t.Errorf("an update over the bound: %v after %v, want refused at once", err, time.Since(start))
	}
}
