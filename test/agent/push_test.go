package agente2e

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/datafile"
)

// applyTimeout bounds one push: file transfer, nginx -t, reload and the
// agent's 1 s reload monitoring.
const applyTimeout = 30 * time.Second

// TestPushAndChange: a connected agent gets the configuration, NGINX serves
// it, the pod reports it applied; identical content is not pushed again; a
// change is served next.
func TestPushAndChange(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "team-a", Name: "gw"}
	pod := types.NamespacedName{Namespace: "team-a", Name: "gw-nginx-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()

	st := cp.waitPod(key, pod, agent.Pending, applyTimeout)
	if st.AppliedVersion != "" {
		t.Fatalf("a pod running the bootstrap configuration reports version %q", st.AppliedVersion)
	}

	v1 := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "one")))
	st = cp.waitPod(key, pod, agent.Applied, applyTimeout)
	if st.AppliedVersion != v1 || st.Message != "" {
		t.Fatalf("applied pod status %+v, want version %s and no message", st, v1)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "one", 5*time.Second)
	if got := cp.srv.Status(key).Version; got != v1 {
		t.Fatalf("Status.Version = %q, want %q", got, v1)
	}

	// The same content again (as new slices) is the same version: nothing is pushed.
	if again := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "one"))); again != v1 {
		t.Fatalf("identical files gave version %s, want %s", again, v1)
	}
	time.Sleep(2 * time.Second)
	if n := len(cp.events.of(agent.EventPushSent)); n != 1 {
		t.Fatalf("%d ConfigApplyRequests sent, want 1: identical content must not be pushed again", n)
	}

	v2 := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "two")))
	if v2 == v1 {
		t.Fatal("changed content kept its version")
	}
	st = cp.waitPod(key, pod, agent.Applied, applyTimeout)
	if st.AppliedVersion != v2 {
		t.Fatalf("applied version %s, want %s", st.AppliedVersion, v2)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "two", 5*time.Second)
	if n := len(cp.events.of(agent.EventPushSent)); n != 2 {
		t.Fatalf("%d ConfigApplyRequests sent, want 2", n)
	}
	if nf := cp.events.of(agent.EventFileNotFound); len(nf) != 0 {
		t.Fatalf("agent asked for missing files: %+v", nf)
	}
	if cp.changes.Load() == 0 {
		t.Fatal("OnChange was never called")
	}
}

// TestNewerConfigDuringPush: configurations set while a push is in flight
// are not pushed alongside it; when it completes the newest is pushed, and
// the agent still gets every file of the in-flight push although that
// version is no longer desired.
func TestNewerConfigDuringPush(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()
	cp.waitPod(key, pod, agent.Pending, applyTimeout)

	// When the first file of "two" is served, "three" and then "four"
	// replace it; "two" has 11 more files to fetch.
	var once sync.Once
	var mu sync.Mutex
	replaced := false
	servedAfter := 0 // files of "two" served after it stopped being desired
	var v3, v4 string
	cp.events.setHook(func(e agent.Event) {
		if e.Type != agent.EventFileServed || !strings.Contains(e.Path, "/two-") {
			return
		}
		mu.Lock()
		if replaced {
			servedAfter++
		}
		mu.Unlock()
		once.Do(func() {
			v3 = cp.srv.SetConfig(key, splitConf(dp.ip, port, "three", 12))
			v4 = cp.srv.SetConfig(key, splitConf(dp.ip, port, "four", 12))
			mu.Lock()
			replaced = true
			mu.Unlock()
		})
	})
	v2 := cp.srv.SetConfig(key, splitConf(dp.ip, port, "two", 12))
	st := cp.waitPod(key, pod, agent.Applied, 2*applyTimeout)
	if st.AppliedVersion != v4 {
		t.Fatalf("applied %s, want the newest %s", st.AppliedVersion, v4)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "four", 5*time.Second)

	if nf := cp.events.of(agent.EventFileNotFound); len(nf) != 0 {
		t.Fatalf("the agent asked for files that were gone: %+v", nf)
	}
	mu.Lock()
	after := servedAfter
	mu.Unlock()
	if after == 0 {
		t.Fatal("no file of the in-flight push was fetched after it was replaced; the test proved nothing")
	}
	var pushed []string
	for _, e := range cp.events.of(agent.EventPushSent) {
		pushed = append(pushed, e.Version)
	}
	if want := []string{v2, v4}; !slices.Equal(pushed, want) {
		t.Fatalf("pushed %.12v, want %.12v: one push in flight, then the newest (never %.12s)", pushed, want, v3)
	}
	results := cp.events.of(agent.EventApplyResult)
	if len(results) != 2 || results[0].Version != v2 || results[0].Message != "OK" {
		t.Fatalf("apply results %+v, want %.12s OK then %.12s", results, v2, v4)
	}
}

// TestReplicas: pods of the same Gateway are tracked separately; a pod of
// another Gateway gets that Gateway's configuration only.
func TestReplicas(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	other := agent.Key{Namespace: "ns", Name: "other"}
	pods := []types.NamespacedName{{Namespace: "ns", Name: "gw-b"}, {Namespace: "ns", Name: "gw-a"}}
	var dps []*dataPlane
	for _, p := range pods {
		dps = append(dps, newDataPlane(t, cp, dataPlaneOptions{pod: p, gateway: key}))
	}
	otherPod := types.NamespacedName{Namespace: "ns", Name: "other-0"}
	odp := newDataPlane(t, cp, dataPlaneOptions{pod: otherPod, gateway: other})
	// The replicas share the host's network here (in a cluster each pod has
	// its own), so their one configuration listens with reuseport. Two
	// processes binding one address with SO_REUSEPORT at the same instant
	// can have one refused (CI saw it once: both replicas reloaded within
	// 10 ms), so the second replica starts once the first serves, and gets
	// the configuration when it connects.
	shared := newLoopback()
	port := freePort(t, shared)
	oport := freePort(t, odp.ip)
	dps[0].start()
	odp.start()
	conf := mainConf(fmt.Sprintf(`    server {
        listen %s reuseport;
        location / { return 200 "gw\n"; }
    }
`, net.JoinHostPort(shared, strconv.Itoa(port))))
	v := cp.srv.SetConfig(key, conf)
	ov := cp.srv.SetConfig(other, mainConf(site(odp.ip, oport, "other")))
	if st := cp.waitPod(key, pods[0], agent.Applied, applyTimeout); st.AppliedVersion != v {
		t.Fatalf("pod %s applied %s, want %s", pods[0], st.AppliedVersion, v)
	}
	dps[1].start()
	for _, p := range pods {
		if st := cp.waitPod(key, p, agent.Applied, applyTimeout); st.AppliedVersion != v {
			t.Fatalf("pod %s applied %s, want %s", p, st.AppliedVersion, v)
		}
	}
	if st := cp.waitPod(other, otherPod, agent.Applied, applyTimeout); st.AppliedVersion != ov {
		t.Fatalf("pod %s applied %s, want %s", otherPod, st.AppliedVersion, ov)
	}
	for _, d := range dps {
		if got, err := os.ReadFile(d.etcNginx("nginx.conf")); err != nil || string(got) != string(conf[0].Data) {
			t.Fatalf("pod %s has another nginx.conf (%v)", d.opts.pod, err)
		}
	}
	waitBody(t, nil, url(shared, port, "http"), "gw", 5*time.Second)
	waitBody(t, nil, url(odp.ip, oport, "http"), "other", 5*time.Second)

	st := cp.srv.Status(key)
	if len(st.Pods) != 2 || st.Pods[0].Pod.Name != "gw-a" || st.Pods[1].Pod.Name != "gw-b" {
		t.Fatalf("Status(%s).Pods = %+v, want gw-a and gw-b in that order", key, st.Pods)
	}
	for _, e := range cp.events.of(agent.EventFileServed) {
		if (e.Pod == otherPod) != (e.Key == other) {
			t.Fatalf("file served across Gateways: %+v", e)
		}
	}
}

// TestPrivateKeyMode: files arrive with their modes (0600 for a private
// key), and NGINX serves TLS with them.
func TestPrivateKeyMode(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()

	siteCA := newCA(t, t.TempDir())
	certPEM, keyPEM := siteCA.issue(t, 7, "site.gatewall.test")
	server := fmt.Sprintf(`    server {
        listen %s ssl;
        ssl_certificate /etc/nginx/secrets/site.pem;
        ssl_certificate_key /etc/nginx/secrets/site.key;
        location / { return 200 "secure\n"; }
    }
`, net.JoinHostPort(dp.ip, strconv.Itoa(port)))
	files := append(mainConf(server),
		datafile.File{Path: "/etc/nginx/secrets/site.pem", Data: certPEM, Mode: 0o644},
		datafile.File{Path: "/etc/nginx/secrets/site.key", Data: keyPEM, Mode: 0o600},
	)
	v := cp.srv.SetConfig(key, files)
	if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v)
	}
	for rel, want := range map[string]os.FileMode{"secrets/site.key": 0o600, "secrets/site.pem": 0o644, "nginx.conf": 0o644} {
		fi, err := os.Stat(dp.etcNginx(rel))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("/etc/nginx/%s has mode %v, want %v", rel, fi.Mode().Perm(), want)
		}
	}
	waitBody(t, tlsClient(siteCA.pool, "site.gatewall.test"), url(dp.ip, port, "https"), "secure", 5*time.Second)

	// A mode change alone is a new version, but the agent does not apply
	// mode changes of unchanged content (it compares hashes only).
	files[2].Mode = 0o640
	if v2 := cp.srv.SetConfig(key, files); v2 == v {
		t.Fatal("a mode change kept the version")
	}
}
