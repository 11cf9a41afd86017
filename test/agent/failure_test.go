package agente2e

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
)

// TestRejectedConfig: a configuration NGINX refuses fails with NGINX's own
// error; NGINX keeps serving the last good one, which stays the applied
// version; a good configuration afterwards applies.
func TestRejectedConfig(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()
	home := url(dp.ip, port, "http")

	good := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "good")))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)
	waitBody(t, nil, home, "good", 5*time.Second)

	bad := cp.srv.SetConfig(key, mainConf("    gatewall_no_such_directive on;\n"+site(dp.ip, port, "bad")))
	st := cp.waitPod(key, pod, agent.Failed, applyTimeout)
	if !strings.Contains(st.Message, "[emerg]") || !strings.Contains(st.Message, "gatewall_no_such_directive") {
		t.Fatalf("failure message %q lacks NGINX's [emerg] text", st.Message)
	}
	if st.AppliedVersion != good {
		t.Fatalf("applied version %s after a rejected push, want the last good %s", st.AppliedVersion, good)
	}
	if got := cp.srv.Status(key).Version; got != bad {
		t.Fatalf("desired version %s, want %s", got, bad)
	}
	// The agent rolled back: the file on disk and what NGINX serves are the good ones.
	waitBody(t, nil, home, "good", 5*time.Second)
	time.Sleep(2 * time.Second)
	if body, err := get(nil, home); err != nil || body != "good" {
		t.Fatalf("after the rejected push NGINX answers %q, %v; want the last good configuration", body, err)
	}
	if n := len(cp.events.of(agent.EventPushSent)); n != 2 {
		t.Fatalf("%d pushes, want 2: a configuration NGINX rejected is not pushed again", n)
	}

	fixed := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "fixed")))
	st = cp.waitPod(key, pod, agent.Applied, applyTimeout)
	if st.AppliedVersion != fixed || st.Message != "" {
		t.Fatalf("status %+v after a good push, want version %s without message", st, fixed)
	}
	waitBody(t, nil, home, "fixed", 5*time.Second)
}

// TestDataPlaneRestart: a data plane stopped (SIGTERM, as the kubelet does)
// and started again, with the configuration changed meanwhile, gets the
// current configuration. NGINX restarts on its emptyDir's last
// configuration, not the bootstrap one.
func TestDataPlaneRestart(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	home := url(dp.ip, port, "http")
	dp.start()
	cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "before")))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)

	if code := dp.stop(); code != 0 {
		t.Fatalf("entrypoint exited %d on SIGTERM, want 0", code)
	}
	waitFor(t, 10*time.Second, "the pod to show disconnected", func() (bool, string) {
		st := cp.srv.Status(key)
		return len(st.Pods) == 1 && !st.Pods[0].Connected, ""
	})
	v2 := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "after")))

	start := time.Now()
	dp.start()
	waitBody(t, nil, home, "before", applyTimeout) // the emptyDir's configuration, before the push
	st := cp.waitPod(key, pod, agent.Applied, applyTimeout)
	t.Logf("restarted data plane applied the current configuration %v after its start", time.Since(start).Round(time.Millisecond))
	if st.AppliedVersion != v2 {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v2)
	}
	waitBody(t, nil, home, "after", 5*time.Second)
	if n := strings.Count(dp.out.String(), "starting with the bootstrap configuration"); n != 1 {
		t.Fatalf("the bootstrap configuration was written %d times, want once (first start only)", n)
	}
}

// TestControlPlaneRestart: the agents reconnect by themselves to a control
// plane that stopped serving and serves again (the same Server: what a
// leader keeps), and get the configuration set while they were away.
func TestControlPlaneRestart(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	home := url(dp.ip, port, "http")
	dp.start()
	v1 := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "one")))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)

	cp.stop()
	v2 := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "two")))
	time.Sleep(time.Second)
	if body, _ := get(nil, home); body != "one" {
		t.Fatalf("NGINX answers %q while the control plane is away, want %q", body, "one")
	}
	start := time.Now()
	cp.serve()
	st := cp.waitPod(key, pod, agent.Applied, applyTimeout)
	t.Logf("reconnected agent applied the current configuration %v after the control plane came back", time.Since(start).Round(time.Millisecond))
	if st.AppliedVersion != v2 || v2 == v1 {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v2)
	}
	waitBody(t, nil, home, "two", 5*time.Second)
}

// TestServerGoneDuringFileTransfer: the control plane stops serving (its side
// of the Subscribe stream and every RPC closes) while the agent fetches the
// files of a push; it serves again a moment later, and the pod ends Applied.
func TestServerGoneDuringFileTransfer(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()
	cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "one")))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)

	dropped := make(chan struct{})
	var once sync.Once
	cp.events.setHook(func(e agent.Event) {
		if e.Type == agent.EventFileServed && strings.Contains(e.Path, "/conf.d/") {
			once.Do(func() {
				go func() { // not from inside an RPC, which Serve waits for
					cp.stop()
					time.Sleep(1500 * time.Millisecond)
					cp.serve()
					close(dropped)
				}()
			})
		}
	})
	v2 := cp.srv.SetConfig(key, splitConf(dp.ip, port, "two", 12))
	<-dropped
	st := cp.waitPod(key, pod, agent.Applied, 2*applyTimeout)
	if st.AppliedVersion != v2 {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v2)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "two", 5*time.Second)
	if nf := cp.events.of(agent.EventFileNotFound); len(nf) != 0 {
		t.Fatalf("agent asked for missing files: %+v", nf)
	}
}

// TestAgentKilledDuringFileTransfer: the agent dies while fetching files; the
// container exits (the entrypoint stops NGINX too) and is started again, as
// the kubelet would; the new agent gets the configuration and applies it.
func TestAgentKilledDuringFileTransfer(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	dp.start()
	cp.waitPod(key, pod, agent.Pending, applyTimeout)

	killed := make(chan int, 1)
	var once sync.Once
	cp.events.setHook(func(e agent.Event) {
		if e.Type == agent.EventFileServed {
			once.Do(func() {
				pid := dp.process("nginx-agent")
				if pid != 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				killed <- pid
			})
		}
	})
	v1 := cp.srv.SetConfig(key, splitConf(dp.ip, port, "one", 12))
	if pid := <-killed; pid == 0 {
		t.Fatal("no nginx-agent process to kill")
	}
	if code := dp.waitExit(20 * time.Second); code == 0 {
		t.Fatal("the entrypoint exited 0 after its agent was killed; the kubelet would not see a failure")
	}
	cp.events.setHook(nil)
	dp.start()
	st := cp.waitPod(key, pod, agent.Applied, applyTimeout)
	if st.AppliedVersion != v1 {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v1)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "one", 5*time.Second)
}
