package agente2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
)

// TestEntrypointExitsWhenNGINXDies: the container does not live on without
// NGINX: the entrypoint stops the agent and exits non-zero, so the kubelet
// restarts it. (SIGTERM and a dying agent: TestDataPlaneRestart and
// TestAgentKilledDuringFileTransfer.)
func TestEntrypointExitsWhenNGINXDies(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	dp.start()
	cp.waitPod(key, pod, agent.Pending, applyTimeout)

	master := dp.process("nginx") // the entrypoint's child, found before the workers
	if master == 0 {
		t.Fatal("no NGINX process")
	}
	if err := syscall.Kill(master, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := dp.waitExit(15 * time.Second); code == 0 {
		t.Fatal("the entrypoint exited 0 after NGINX died")
	}
	if !strings.Contains(dp.out.String(), "NGINX exited; stopping nginx-agent") {
		t.Fatalf("the entrypoint did not say why it stopped:\n%s", dp.out.String())
	}
	waitFor(t, 10*time.Second, "the pod to show disconnected", func() (bool, string) {
		st := cp.srv.Status(key)
		return len(st.Pods) == 1 && !st.Pods[0].Connected, ""
	})
}

// TestEntrypointReplacesBrokenConfig: a container restarting on an
// /etc/nginx that NGINX refuses (an agent killed in the middle of a push)
// starts with the bootstrap configuration instead of crash-looping, and
// gets the Gateway's configuration again.
func TestEntrypointReplacesBrokenConfig(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "ns", Name: "gw"}
	pod := types.NamespacedName{Namespace: "ns", Name: "gw-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key})
	port := freePort(t, dp.ip)
	writeFile(t, dp.etcNginx("nginx.conf"), nginxConf("    include /etc/nginx/conf.d/missing-*.conf;\n    no_such_directive;\n"), 0o644)
	dp.start()
	v := cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "repaired")))
	if st := cp.waitPod(key, pod, agent.Applied, applyTimeout); st.AppliedVersion != v {
		t.Fatalf("applied %s, want %s", st.AppliedVersion, v)
	}
	waitBody(t, nil, url(dp.ip, port, "http"), "repaired", 5*time.Second)
	if !strings.Contains(dp.out.String(), "fails nginx -t: starting with the bootstrap configuration") {
		t.Fatalf("the entrypoint did not say it replaced the configuration:\n%s", dp.out.String())
	}
}

// TestEntrypointBoundsErrorLog: the error log file NGINX writes for the
// agent (an emptyDir in a pod) is emptied once over 1 MiB, and the agent
// still finds a failed reload's error in it afterwards.
func TestEntrypointBoundsErrorLog(t *testing.T) {
	t.Parallel()
	sc := startReloadScene(t)
	cp, dp, gw, pod, port, held, plane := sc.cp, sc.dp, sc.gw, sc.pod, sc.port, sc.held, sc.plane
	plane.Publish(gw, gatewallConf(site(dp.ip, port, "good")))
	cp.waitPod(gw, pod, agent.Applied, applyTimeout)

	errorLog := filepath.Join(dp.dir, "log", "error.log")
	f, err := os.OpenFile(errorLog, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("NGINX's error log for the agent: %v", err)
	}
	line := "2026/11/24 00:00:00 [crit] 1#1: filler\n"
	_, err = f.WriteString(strings.Repeat(line, 1<<20/len(line)+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "the entrypoint to empty the error log", func() (bool, string) {
		fi, err := os.Stat(errorLog)
		if err != nil {
			return false, err.Error()
		}
		return fi.Size() < 1<<20 && strings.Contains(dp.out.String(), "emptied /var/log/nginx/error.log"), fmt.Sprint(fi.Size())
	})

	plane.Publish(gw, gatewallConf(site(dp.ip, port, "bad")+site(dp.ip, held, "held")))
	st := cp.waitPod(gw, pod, agent.Failed, applyTimeout)
	if !strings.Contains(st.Message, "bind() to "+net.JoinHostPort(dp.ip, strconv.Itoa(held))) {
		t.Fatalf("failure message %q lacks NGINX's logged bind() error", st.Message)
	}
}
