package balancer

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// BenchmarkDataPlaneMemory measures what one data-plane NGINX holds in
// memory with the configuration Gatewall renders for a Gateway of N
// HTTPRoutes, each to its own Service with two endpoints, once every
// route has served a request: the proportional set size (PSS: shared
// pages divided among the processes sharing them, what the container's
// memory cgroup is charged, near enough) of the master and its workers,
// the workers' own share, and the same while a reload's old workers still
// hold a connection (what a container needs at the peak of a
// configuration change). The figures chose the data-plane containers'
// default requests and limits (docs/budgets.md).
//
//	go test ./test/balancer -run '^$' -bench DataPlaneMemory -benchtime 1x
func BenchmarkDataPlaneMemory(b *testing.B) {
	for _, n := range []int{1, 1000, 5000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				measureMemory(b, n)
			}
		})
	}
}

func measureMemory(b *testing.B, n int) {
	var extra strings.Builder
	for r := 0; r < n; r++ {
		fmt.Fprintf(&extra, `---
apiVersion: v1
kind: Service
metadata: {name: m%[1]d, namespace: ns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: m%[1]d, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  hostnames: [m%[1]d.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: m%[1]d, port: 80}]
`, r)
	}
	b.StopTimer()
	files := renderFiles(b, extra.String())
	d := startDataPlane(b, files)
	back := d.backend("b1", "127.0.0.2")
	set := endpoints.Set{}
	for s := range methods {
		set[upstreamID(s)] = endpoints.Upstream{Name: upstreamName(s), Endpoints: []string{back.addr}}
	}
	for r := 0; r < n; r++ {
		svc := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("m%d", r)}
		// Endpoints that refuse: every route's balancer and failure state
		// is touched, and no upstream connection is kept alive (5,000
		// upstreams' kept connections would exceed worker_connections).
		set[config.UpstreamID(svc, 80)] = endpoints.Upstream{Name: config.UpstreamName(svc, 80), Endpoints: []string{"127.0.0.3:8080", "127.0.0.4:8080"}}
	}
	d.setEndpoints(set)
	idle, idleWorkers := d.memory()
	b.ReportMetric(float64(idle)/(1<<20), "idle-PSS-MiB")
	b.ReportMetric(float64(idleWorkers)/(1<<20), "idle-workers-PSS-MiB")
	for r := 0; r < n; r++ {
		req, _ := http.NewRequest("GET", "http://127.0.0.1/api", nil)
		req.Host = fmt.Sprintf("m%d.example.com", r)
		if resp, err := d.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	total, workers := d.memory()
	b.ReportMetric(float64(total)/(1<<20), "PSS-MiB")
	b.ReportMetric(float64(workers)/(1<<20), "workers-PSS-MiB")
	b.ReportMetric(float64(d.workerPrivate())/(1<<20), "worker-private-MiB")
	// A reload while a connection is open: the old workers stay until it
	// closes (or workerShutdownTimeout passes).
	back.mu.Lock()
	back.delay = 5 * time.Second
	back.mu.Unlock()
	held := make(chan string, 1)
	go func() {
		got, err := d.get("/rr", 80)
		held <- fmt.Sprint(got, err)
	}()
	d.eventually("the held request", func() bool {
		select {
		case r := <-held:
			b.Fatalf("the held request ended early: %s", r)
		default:
		}
		back.mu.Lock()
		defer back.mu.Unlock()
		return back.inFlight == 1
	})
	hold := func() { <-held }
	old := d.workers()
	if err := syscall.Kill(d.srv.PID(), syscall.SIGHUP); err != nil {
		b.Fatal(err)
	}
	d.eventually("new workers", func() bool { return len(strings.Fields(d.workers())) > len(strings.Fields(old)) })
	peak, _ := d.memory()
	b.ReportMetric(float64(peak)/(1<<20), "reload-PSS-MiB")
	hold()
}

// memory is the PSS of NGINX's master and workers, and of the workers alone.
func (d *dataPlane) memory() (total, workers int64) {
	total = pss(d.srv.PID())
	out, _ := exec.Command("pgrep", "-P", fmt.Sprint(d.srv.PID())).Output()
	for _, p := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(p)
		w := pss(pid)
		workers += w
		total += w
	}
	return total, workers
}

// workerPrivate is the largest private memory (pages no other process
// shares) of one worker: what each more worker adds.
func (d *dataPlane) workerPrivate() int64 {
	var most int64
	out, _ := exec.Command("pgrep", "-P", fmt.Sprint(d.srv.PID())).Output()
	for _, p := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(p)
		most = max(most, smaps(pid, "Private_Clean:")+smaps(pid, "Private_Dirty:"))
	}
	return most
}

// pss is a process's proportional set size in bytes.
func pss(pid int) int64 { return smaps(pid, "Pss:") }

// smaps is one field of a process's smaps_rollup, in bytes.
func smaps(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
