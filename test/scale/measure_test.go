package scale

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gatewall/gatewall/test/testenv"
)

// summary is the table `make scale` prints: each figure, what was measured,
// and the goal of issue 13.
type summary struct{ rows [][3]string }

var report summary

func (s *summary) add(figure, measured, goal string) {
	s.rows = append(s.rows, [3]string{figure, measured, goal})
}

func (s *summary) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | measured | goal |\n|---|---|---|\n")
	for _, r := range s.rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	return b.String()
}

// percentile is the q-quantile (0 < q <= 1) of ds, nearest rank.
func percentile[T cmp.Ordered](ds []T, q float64) T {
	if len(ds) == 0 {
		var zero T
		return zero
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// nginxTest times `nginx -t` of the configuration a data-plane pod's NGINX
// runs, inside the pod's mount and PID namespaces (NGINX logs to
// /dev/stdout, which leads to the pod's /proc/self): the median of three
// runs.
func nginxTest(t *testing.T, master int) time.Duration {
	t.Helper()
	var runs []time.Duration
	for i := 0; i < 3; i++ {
		start := time.Now()
		out, err := exec.Command("nsenter", "--target", strconv.Itoa(master), "--mount", "--pid", "--", "nginx", "-t", "-q").CombinedOutput()
		if err != nil {
			t.Fatalf("nginx -t in the data-plane pod: %v: %s", err, out)
		}
		runs = append(runs, time.Since(start))
	}
	return percentile(runs, 0.5)
}

// nginxReload reloads a data-plane pod's NGINX (the configuration it runs
// already) and times it as clients see it: from the signal until every old
// worker is told to shut down. Until then old workers accept connections
// too, with the old configuration (the master starts the new workers, then
// waits 100 ms before it signals the old ones).
func nginxReload(t *testing.T, master int) time.Duration {
	t.Helper()
	old := testenv.Children(master)
	start := time.Now()
	if err := syscall.Kill(master, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for time.Since(start) < 30*time.Second {
		if !slices.ContainsFunc(old, serving) {
			return time.Since(start)
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("NGINX (master %d): its workers were not told to shut down within 30s of SIGHUP", master)
	return 0
}

// serving says whether NGINX worker pid runs and was not told to shut down.
func serving(pid int) bool {
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && len(cmd) > 0 && !strings.Contains(string(cmd), "shutting down")
}

// managerPod is the manager pod that leads, and its process on this host.
func managerPod(t *testing.T) (corev1.Pod, int) {
	t.Helper()
	pod := rt.LeaderPod(t)
	return pod, testenv.WaitProcess(t, pod, "/gatewall")
}

// metrics reads gauges from the manager's Prometheus endpoint, as a
// client allowed to (a ServiceAccount bound to the metrics-reader role).
func metrics(t *testing.T, pod corev1.Pod, names ...string) map[string]float64 {
	t.Helper()
	token := rt.MetricsToken(t, fmt.Sprintf("scale-metrics-%d", time.Now().UnixNano()), true)
	families := testenv.ManagerMetrics(t, pod, token)
	got := map[string]float64{}
	for _, n := range names {
		got[n] = testenv.Gauge(t, families, n)
	}
	return got
}

// rss is a process's resident memory; the test fails if it is gone.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := testenv.RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cpuShare is the CPU a process used between two samples, as a share of
// one core over the wall time between them.
func cpuShare(cpuBefore, cpuAfter time.Duration, wall time.Duration) string {
	return fmt.Sprintf("%.0f%% of a core", 100*float64(cpuAfter-cpuBefore)/float64(wall))
}

// profileCPU starts a CPU profile of the leading manager for d and writes
// it to path (when path is set); the returned func waits for it.
func profileCPU(t *testing.T, path string, d time.Duration) func() {
	t.Helper()
	if path == "" {
		return func() {}
	}
	pod, _ := managerPod(t)
	done := make(chan error, 1)
	go func() {
		c := &http.Client{Timeout: d + 30*time.Second}
		resp, err := c.Get(fmt.Sprintf("http://%s:%s/debug/pprof/profile?seconds=%d", pod.Status.PodIP, pprofPort, int(d.Seconds())))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		done <- errors.Join(err, f.Close())
	}()
	return func() {
		if err := <-done; err != nil {
			t.Errorf("the manager's CPU profile: %v", err)
		}
	}
}
