package endpointfeed

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// BenchmarkClientMemory measures the memory of the data plane's endpoints
// container: the real gatewall-endpoints binary, connected to a feed over
// TLS, receiving a Gateway's whole set of endpoints (N upstreams of M
// endpoints each) and handing it on. Its peak resident set (VmHWM) chose
// the container's default request and limit (docs/budgets.md). NGINX's
// side of the socket is a plain HTTP server answering 200 here: what it
// does with the update costs NGINX's memory (measured with NGINX in
// test/balancer), not the client's.
//
//	go test ./internal/endpointfeed -run '^$' -bench ClientMemory -benchtime 1x
func BenchmarkClientMemory(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "gatewall-endpoints")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/gatewall-endpoints").CombinedOutput(); err != nil {
		b.Fatalf("building gatewall-endpoints: %v\n%s", err, out)
	}
	for _, size := range []struct{ upstreams, endpoints int }{{5000, 2}, {5000, 20}, {100, 1000}} {
		b.Run(fmt.Sprintf("upstreams=%d/endpoints=%d", size.upstreams, size.endpoints), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				peak := clientPeakMemory(b, bin, size.upstreams, size.endpoints)
				b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			}
		})
	}
}

func clientPeakMemory(b *testing.B, bin string, upstreams, perUpstream int) int64 {
	f := startFeed(b)
	dir := b.TempDir()
	sock := filepath.Join(dir, "nginx.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })}
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("pod\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--server="+f.addr, "--server-name=localhost", "--ca-file="+f.ca, "--token-file="+tok,
		"--nginx-socket="+sock, "--state-file="+filepath.Join(dir, "state.json"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	set := endpoints.Set{}
	for u := 0; u < upstreams; u++ {
		var eps []string
		for e := 0; e < perUpstream; e++ {
			eps = append(eps, fmt.Sprintf("10.%d.%d.%d:8080", u/250, u%250, e%250+e/250))
		}
		set[fmt.Sprintf("%032x", u)] = endpoints.Upstream{Name: fmt.Sprintf("ns_svc%d_80", u), Endpoints: eps}
	}
	version := f.Set(gw, set, endpoints.Resolver{})
	eventually(b, "the pod's acknowledgement", func() bool {
		p, ok := podStatus(f, "pod")
		return ok && p.Version == version
	})
	return procStatus(b, cmd.Process.Pid, "VmHWM:")
}

// procStatus is a memory field of /proc/PID/status, in bytes.
func procStatus(b *testing.B, pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fs := strings.Fields(s.Text()); len(fs) >= 2 && fs[0] == field {
			kb, _ := strconv.ParseInt(fs[1], 10, 64)
			return kb << 10
		}
	}
	b.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}
