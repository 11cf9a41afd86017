package agente2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
)

// The flood's size and what it may cost the server.
const (
	floodSeconds = 20
	// floodHeapBound bounds the growth of the server's live heap during the
	// flood (3 MiB measured). Before the agent port authenticated before
	// reading, this flood grew it by 795 MiB, with 1,501 TokenReviews and
	// 2,663 refusals logged.
	floodHeapBound = 32 << 20
	// The agent server's review budget per peer address (burst, then a
	// second) and its log sampling (lines per 10 s, per kind of refusal:
	// RPCs, connections, TLS handshakes).
	reviewBurstPerPeer      = 10
	reviewsPerSecondPerPeer = 2
	refusalLinesPer10s      = 10
)

// TestFlood floods the agent port from six addresses for floodSeconds:
// 15 MiB requests with a forged token, garbage tokens, forged tokens new
// each time, no tokens; connections that never handshake and plaintext
// HTTP/2. Meanwhile a real agent keeps receiving its configurations and a
// new pod's agent connects. The server's live heap, the TokenReviews it
// asks the API server for and the refusals it logs stay bounded.
func TestFlood(t *testing.T) {
	requireTools(t)
	c, counted, reviews := startAPIServer(t)
	ns := "team-flood"
	mustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mustCreate(t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw-nginx"}})
	cp := startControlPlane(t, controlPlaneOptions{auth: agent.NewTokenReviewAuthenticator(counted, audience)})
	// served starts the pod name of Gateway gw, its token bound to it, and
	// waits until NGINX there serves body.
	served := func(name string, gw agent.Key, body string) (types.NamespacedName, *dataPlane, int) {
		p := newPod(t, c, ns, name, map[string]string{agent.PodLabelGatewayName: gw.Name}, corev1.PodRunning)
		pod := types.NamespacedName{Namespace: ns, Name: name}
		dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: gw, token: requestToken(t, c, p, audience), logLevel: "info"})
		port := freePort(t, dp.ip)
		dp.start()
		configure(t, cp, gw, pod, dp, port, body)
		return pod, dp, port
	}

	key := agent.Key{Namespace: ns, Name: "gw"}
	pod, dp, port := served("gw-nginx-0", key, "before")
	baseline := liveHeap()
	reviewsBefore := reviews.Load()

	flood := startFlood(t, floodOrders{
		Addr: cp.addr(), Audience: audience, Seconds: floodSeconds,
		RPCIPs:   []string{"127.250.0.1", "127.250.0.2", "127.250.0.3", "127.250.0.4"},
		StallIPs: []string{"127.250.1.1", "127.250.1.2"},
	})
	peak := sampleHeap(flood.done)

	// While the flood lasts: new configurations reach the running agent,
	// and a new pod's agent (of another Gateway: the pods share the host's
	// network) connects, its token reviewed.
	for i := range 2 {
		configure(t, cp, key, pod, dp, port, fmt.Sprint("during-", i))
	}
	served("gw1-nginx-0", agent.Key{Namespace: ns, Name: "gw1"}, "new pod")
	select {
	case <-flood.done:
		t.Fatal("the flood ended before the agents were served: make it longer")
	default:
	}

	rep := flood.wait(t)
	t.Logf("flood: %+v", rep)
	if rep.LargeRequests == 0 || rep.Stalls == 0 {
		t.Fatalf("the flooder did not flood: %+v", rep)
	}
	growth := peak.Load() - baseline
	t.Logf("live heap: %d MiB before, %d MiB more at the flood's peak", baseline>>20, growth>>20)
	if growth > floodHeapBound {
		t.Errorf("the server's live heap grew by %d MiB during the flood, more than %d MiB", growth>>20, floodHeapBound>>20)
	}
	// Forged tokens new each time are the only ones that cost reviews:
	// each address's budget (and one for a second boundary); the repeated
	// one once per refusal's cache life (5 s) at most; the new pod's, and
	// a few of the agents' own.
	floodReviews := reviews.Load() - reviewsBefore
	maxReviews := int64(4*(reviewBurstPerPeer+reviewsPerSecondPerPeer*floodSeconds+1) + floodSeconds/5 + 1 + 4)
	t.Logf("TokenReviews during the flood: %d (bound %d)", floodReviews, maxReviews)
	if floodReviews > maxReviews {
		t.Errorf("%d TokenReviews during the flood, more than %d", floodReviews, maxReviews)
	}
	lines := strings.Count(cp.logs.String(), `"Refused a`)
	maxLines := 3 * refusalLinesPer10s * (floodSeconds/10 + 2)
	t.Logf("refusals logged: %d lines (bound %d) for %d requests", lines, maxLines, rep.Requests)
	if lines > maxLines {
		t.Errorf("%d refusal lines logged, more than %d", lines, maxLines)
	}
}

// configure makes body what NGINX of gw's pod serves on port, and waits
// until it does.
func configure(t *testing.T, cp *controlPlane, gw agent.Key, pod types.NamespacedName, dp *dataPlane, port int, body string) {
	t.Helper()
	v := cp.srv.SetConfig(gw, mainConf(site(dp.ip, port, body)))
	if st := cp.waitPod(gw, pod, agent.Applied, applyTimeout); st.AppliedVersion != v {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), body, 5*time.Second)
}

// liveHeap is the test process's heap after a garbage collection.
func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// sampleHeap records the largest live heap seen until done is closed.
func sampleHeap(done <-chan struct{}) *atomic.Int64 {
	var peak atomic.Int64
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			if h := liveHeap(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return &peak
}

type runningFlood struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	errs *syncBuffer
	done chan struct{}
}

// startFlood runs the flooder (this test binary, see TestMain).
func startFlood(t *testing.T, o floodOrders) *runningFlood {
	t.Helper()
	orders, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	f := &runningFlood{out: &syncBuffer{}, errs: &syncBuffer{}, done: make(chan struct{})}
	f.cmd = exec.Command(os.Args[0], "-test.run=^$")
	f.cmd.Env = append(os.Environ(), floodEnv+"="+string(orders))
	f.cmd.Stdout, f.cmd.Stderr = f.out, f.errs
	if err := f.cmd.Start(); err != nil {
		t.Fatalf("starting the flooder: %v", err)
	}
	go func() {
		_ = f.cmd.Wait()
		close(f.done)
	}()
	t.Cleanup(func() {
		_ = f.cmd.Process.Kill()
		<-f.done
	})
	return f
}

// wait waits for the flood to end and returns the flooder's report.
func (f *runningFlood) wait(t *testing.T) floodReport {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(time.Duration(floodSeconds)*time.Second + time.Minute):
		t.Fatal("the flooder did not stop")
	}
	var rep floodReport
	if err := json.Unmarshal([]byte(f.out.String()), &rep); err != nil || !f.cmd.ProcessState.Success() {
		t.Fatalf("flooder: %v, %v; stderr:\n%s", f.cmd.ProcessState, err, f.errs.String())
	}
	return rep
}
