package agente2e

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/datafile"
)

// BenchmarkPushSmall pushes a one-server configuration to one real agent.
func BenchmarkPushSmall(b *testing.B) { benchmarkPush(b, 1, "/var/log/nginx/error.log") }

// BenchmarkPush5000Servers pushes a configuration of 5,000 server blocks
// (one nginx.conf of about 1.5 MB, which the agent fetches with
// GetFileStream) to one real agent.
//
// Metrics: setconfig-ms is SetConfig itself (hashing, storing); sent-ms is
// SetConfig to ConfigApplyRequest sent (the control plane's share); applied-ms
// is SetConfig to the pod reported Applied (transfer, nginx -t, reload and the
// agent's 1 s reload monitoring).
func BenchmarkPush5000Servers(b *testing.B) { benchmarkPush(b, 5000, "/var/log/nginx/error.log") }

// BenchmarkPush5000ServersStderrLog is BenchmarkPush5000Servers with NGINX
// logging errors to stderr only: the agent then skips reload monitoring.
func BenchmarkPush5000ServersStderrLog(b *testing.B) { benchmarkPush(b, 5000, "stderr") }

func benchmarkPush(b *testing.B, servers int, errorLog string) {
	cp := startControlPlane(b, controlPlaneOptions{})
	key := agent.Key{Namespace: "bench", Name: "gw"}
	pod := types.NamespacedName{Namespace: "bench", Name: "gw-0"}
	// At debug level the agent logs each parsed configuration in full.
	dp := newDataPlane(b, cp, dataPlaneOptions{pod: pod, gateway: key, logLevel: "info"})
	port := freePort(b, dp.ip)
	dp.start()
	// Warm up: the first push to a new agent waits for its report of files.
	cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "warm-up")))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)

	sent := make(chan time.Time, 1)
	cp.events.setHook(func(e agent.Event) {
		if e.Type == agent.EventPushSent {
			sent <- time.Now()
		}
	})
	var setMS, sentMS, appliedMS float64
	size := 0
	b.ResetTimer()
	for i := range b.N {
		files := []datafile.File{{Path: "/etc/nginx/nginx.conf", Data: nginxConfLog(errorLog, benchServers(dp.ip, port, servers, i))}}
		size = len(files[0].Data)
		start := time.Now()
		v := cp.srv.SetConfig(key, files)
		set := time.Now()
		var at time.Time
		select {
		case at = <-sent:
		case <-time.After(applyTimeout):
			b.Fatal("no push sent")
		}
		st := cp.waitPod(key, pod, agent.Applied, 2*applyTimeout)
		done := time.Now()
		if st.AppliedVersion != v {
			b.Fatalf("applied %s, want %s", st.AppliedVersion, v)
		}
		setMS += float64(set.Sub(start).Microseconds()) / 1000
		sentMS += float64(at.Sub(start).Microseconds()) / 1000
		appliedMS += float64(done.Sub(start).Microseconds()) / 1000
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(setMS/n, "setconfig-ms")
	b.ReportMetric(sentMS/n, "sent-ms")
	b.ReportMetric(appliedMS/n, "applied-ms")
	b.ReportMetric(float64(size), "config-bytes")

	// The last server of the last iteration answers: the configuration is live.
	last := servers - 1
	req, _ := http.NewRequest(http.MethodGet, url(dp.ip, port, "http"), nil)
	req.Host = fmt.Sprintf("s%d.bench.gatewall.test", last)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Gatewall-Route"); got != fmt.Sprintf("route-%d-%d", b.N-1, last) {
		b.Fatalf("server %d answered route %q", last, got)
	}
}

// benchServers is n server blocks on one listener, told apart by name.
func benchServers(ip string, port, n, iteration int) string {
	var sb strings.Builder
	sb.WriteString("    server_names_hash_bucket_size 128;\n    server_names_hash_max_size 65536;\n")
	listen := net.JoinHostPort(ip, strconv.Itoa(port))
	for i := range n {
		fmt.Fprintf(&sb, `    server {
        listen %s;
        server_name s%d.bench.gatewall.test;
        location / {
            add_header X-Gatewall-Route "route-%d-%d" always;
            return 200 "server %d, iteration %d\n";
        }
        location /api/ { return 404; }
    }
`, listen, i, iteration, i, i, iteration)
	}
	return sb.String()
}
