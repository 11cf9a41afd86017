// Package datapath measures the data path's own cost (issue 41): the
// requests per second 16 keep-alive clients get through Gatewall's NGINX,
// serving the configuration rendered for the sample Gateway (one HTTP
// listener, an HTTPRoute to a Service of two endpoints, the sample's
// NginxProxy with one worker) with its Lua balancer and the endpoints
// handed to it as a pod's endpoints client does, beside the same NGINX
// serving a hand-written configuration (one worker, a static keep-alive
// upstream) to the same kind of backends; and both again behind the local
// runtime's load balancer (internal/local/loadbalancer), as the sample is
// reached on the local runtime. Variants of Gatewall's configuration with
// one factor changed each say where the difference goes.
//
// Each NGINX runs in its own network and mount namespaces (test/nginxtest);
// its two backends, tiny Go HTTP servers, listen on loopback addresses
// inside them. The machine is shared and its other load drifts, so each
// configuration's run sits between two runs of the hand-written one, round
// after round, each round in another order, and the report gives per
// configuration the median of its ratios to those neighbours: of requests
// per second, and of the NGINX worker's CPU time per request (the ratio a
// saturated worker would give; steadier than the former). It reports; it
// never fails on speed, only on failed requests. `make datapath` runs it
// (root).
package datapath

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

var (
	rounds   = flag.Int("datapath.rounds", 0, "rounds of measurement (every configuration once a round); 0: a smoke run of one short round of the two main configurations and the load balancer (go test's default)")
	duration = flag.Duration("datapath.duration", 5*time.Second, "how long each configuration is loaded per round")
	clients  = flag.Int("datapath.clients", 16, "keep-alive clients")
	only     = flag.String("datapath.configs", "", "comma-separated configurations to measure besides hand and gatewall (empty: every variant and the load balancer's)")
	report   = flag.String("datapath.report", "", "file to write the report's table to (Markdown)")
)

// target is one configuration under load: an NGINX (and the address
// clients reach it at: its port, or the load balancer's in front of it).
type target struct {
	name, what string
	srv        *nginxtest.Server
	addr       string
	backends   []*backend
	workers    []int
	results    []result
	// ratios are the requests per second of each run over the mean of the
	// hand-written configuration's runs beside it; cpuRatios the same of
	// the hand-written one's worker CPU per request over this one's (the
	// ratio of requests per second a saturated worker would give).
	ratios, cpuRatios []float64
	// answered counts every request answered, the warm-up's too, and
	// those of the same NGINX behind the load balancer (which share its
	// backends).
	answered *int
}

const hand = "hand"

func TestDataPathCost(t *testing.T) {
	if *rounds == 0 {
		// go test's default run (make test) serves the same configurations
		// and fails on a failed request, without measuring: `make
		// datapath` measures (-datapath.rounds).
		*rounds, *duration, *only = 1, 300*time.Millisecond, "lb"
	}
	nginxtest.RequireRoot(t)
	gatewall, err := gatewallFiles()
	if err != nil {
		t.Fatal(err)
	}
	wanted := func(name string) bool {
		return *only == "" || slices.Contains(strings.Split(*only, ","), name)
	}
	targets := []*target{start(t, hand, "hand-written NGINX", handWritten(), false), start(t, "gatewall", "Gatewall's rendered configuration", gatewall, true)}
	for _, v := range variants {
		if !wanted(v.name) {
			continue
		}
		files, err := v.apply(gatewall)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, start(t, v.name, v.what, files, true))
	}
	if wanted("lb") {
		targets = append(targets, behindLoadBalancer(t, targets[0]), behindLoadBalancer(t, targets[1]))
	}
	for _, tg := range targets {
		// Warm up: connections to the backends, Lua's code and caches.
		*tg.answered += load(tg.srv.Dial, tg.addr, *clients, 500*time.Millisecond).requests
	}
	// Each configuration's run sits between two of the hand-written one's,
	// and its ratios are to their mean: the machine's other load drifts
	// over seconds, and a ratio of neighbours cancels most of it.
	base, others := targets[0], targets[1:]
	measure := func(r int, tg *target) result {
		before := cpu(tg.workers)
		res := load(tg.srv.Dial, tg.addr, *clients, *duration)
		res.cpu = cpu(tg.workers) - before
		if res.failures > 0 {
			t.Errorf("%s: %d failed requests, the first: %v", tg.name, res.failures, res.firstErr)
		}
		tg.results = append(tg.results, res)
		*tg.answered += res.requests
		t.Logf("round %d %-18s %8.0f req/s  p50 %v  p99 %v  worker CPU %v/request", r+1, tg.name, res.rps(), res.p50, res.p99, res.cpuPerRequest())
		return res
	}
	for r := 0; r < *rounds; r++ {
		prev := measure(r, base)
		for i := range others {
			tg := others[(i+r)%len(others)]
			res := measure(r, tg)
			next := measure(r, base)
			tg.ratios = append(tg.ratios, 2*res.rps()/(prev.rps()+next.rps()))
			tg.cpuRatios = append(tg.cpuRatios, float64(prev.cpuPerRequest()+next.cpuPerRequest())/2/float64(res.cpuPerRequest()))
			prev = next
		}
	}
	table := summarize(targets)
	t.Logf("%d rounds of %v, %d clients, %s\n%s", *rounds, *duration, *clients, time.Now().UTC().Format(time.RFC3339), table)
	if *report != "" {
		if err := os.WriteFile(*report, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// start serves files with NGINX and two backends in its namespaces; with
// dynamic, the endpoints are handed to NGINX's Lua as a pod's endpoints
// client does.
func start(t *testing.T, name, what string, files []config.File, dynamic bool) *target {
	t.Helper()
	srv, err := nginxtest.ServeWith(nginxtest.ServeOptions{Files: files, Port: 80})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { srv.Stop() })
	tg := &target{name: name, what: what, srv: srv, addr: "127.0.0.1:80", answered: new(int)}
	for _, a := range endpointAddrs {
		l, err := srv.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b := serveBackend(l)
		t.Cleanup(func() { _ = b.srv.Close() })
		tg.backends = append(tg.backends, b)
	}
	if dynamic {
		set := endpoints.Set{echoUpstream: {Name: "svc_default_echo_8080", Endpoints: endpointAddrs}}
		if err := srv.SetEndpoints(set); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, w := range strings.Fields(srv.Workers()) {
		pid, _ := strconv.Atoi(w)
		tg.workers = append(tg.workers, pid)
	}
	if len(tg.workers) != 1 {
		t.Fatalf("%s: NGINX runs workers %v, want one", name, tg.workers)
	}
	return tg
}

// behindLoadBalancer is tg reached through the local runtime's load
// balancer: its userspace proxy, listening in tg's namespace, forwarding
// every connection to tg's NGINX.
func behindLoadBalancer(t *testing.T, tg *target) *target {
	t.Helper()
	l, err := tg.srv.Listen("tcp", "127.0.0.1:9000")
	if err != nil {
		t.Fatal(err)
	}
	p := loadbalancer.NewProxyDialing(l, tg.srv.Dial)
	p.SetBackends([]string{tg.addr})
	t.Cleanup(p.Close)
	lb := *tg
	lb.name, lb.what, lb.addr, lb.results, lb.backends = tg.name+"+lb", tg.what+" behind the local load balancer", l.Addr().String(), nil, nil
	return &lb
}

// cpu is the time the processes ran on a CPU so far, in nanoseconds
// (/proc/PID/schedstat): utime and stime count 10 ms ticks, too coarse
// for a run of a few seconds.
func cpu(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data))
		if len(fields) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(fields[0], 10, 64)
		total += time.Duration(ns)
	}
	return total
}

// summarize is the report's table: per configuration the median of its
// ratios to the hand-written configuration beside it (and their range),
// medians of its own figures, and the connections its backends accepted
// in all, with the requests each carried on average (keep-alive reuse:
// NGINX closes one after keepalive_requests, 1000).
func summarize(targets []*target) string {
	var b strings.Builder
	fmt.Fprintln(&b, "| configuration | req/s (median) | req/s ratio to hand (median, min–max) | worker CPU/request | CPU ratio (hand's/this) | p50 | p99 | upstream connections |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|")
	for i, tg := range targets {
		var rps []float64
		var p50, p99, cpus []time.Duration
		for _, r := range tg.results {
			rps = append(rps, r.rps())
			p50, p99, cpus = append(p50, r.p50), append(p99, r.p99), append(cpus, r.cpuPerRequest())
		}
		ratio, cpuRatio := "1", "1"
		if i > 0 {
			ratio = fmt.Sprintf("%.2f (%.2f–%.2f)", median(tg.ratios), slices.Min(tg.ratios), slices.Max(tg.ratios))
			cpuRatio = fmt.Sprintf("%.2f (%.2f–%.2f)", median(tg.cpuRatios), slices.Min(tg.cpuRatios), slices.Max(tg.cpuRatios))
		}
		conns := "its NGINX's"
		if len(tg.backends) > 0 {
			n := int64(0)
			for _, be := range tg.backends {
				n += be.conns.Load()
			}
			conns = fmt.Sprintf("%d (%d requests each)", n, int64(*tg.answered)/max(n, 1))
		}
		fmt.Fprintf(&b, "| %s: %s | %.0f | %s | %v | %s | %v | %v | %s |\n", tg.name, tg.what, median(rps), ratio,
			median(cpus).Round(100*time.Nanosecond), cpuRatio, median(p50).Round(time.Microsecond), median(p99).Round(time.Microsecond), conns)
	}
	return b.String()
}

func median[T float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
