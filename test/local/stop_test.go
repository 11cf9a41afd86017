package local

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/test/testenv"
)

// second is a runtime these tests start beside the shared one, and stop.
var second = testenv.LocalRuntime{Name: "local-stop", Prefix: "gwls", CIDR: "10.248.0.0/23", LoadBalancerCIDR: "127.0.4.0/24"}

// TestSecondRuntime runs a second runtime beside the shared one, with
// Gatewall deployed. A permission taken from Gatewall's ClusterRole makes
// stopping it fail, naming the refusal (so a verb missing from
// config/rbac fails every suite); once stopped, nothing of it is left on
// the host and the host's settings are unchanged.
func TestSecondRuntime(t *testing.T) {
	before := hostSettings()
	l, err := second.Start()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	role := &rbacv1.ClusterRole{}
	if err := l.Client.Get(ctx, client.ObjectKey{Name: "gatewall-manager-role"}, role); err != nil {
		_ = l.Stop()
		t.Fatal(err)
	}
	// Without list and watch on Gateways the manager's informers are refused.
	for i, r := range role.Rules {
		for _, res := range r.Resources {
			if res == "gatewayclasses" {
				role.Rules = append(role.Rules[:i], role.Rules[i+1:]...)
				break
			}
		}
	}
	if err := l.Client.Update(ctx, role); err != nil {
		_ = l.Stop()
		t.Fatal(err)
	}
	// A new manager pod lists every kind it watches, and is refused.
	if err := l.Client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(localrun.ManagerNamespace),
		client.MatchingLabels{"app.kubernetes.io/component": "controller"}); err != nil {
		_ = l.Stop()
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && len(l.Refusals(ctx)) == 0; {
		time.Sleep(time.Second)
	}
	err = l.Stop()
	if err == nil || !strings.Contains(err.Error(), "config/rbac misses a permission") {
		t.Errorf("stopping a runtime whose manager was refused: %v, want the refusals named", err)
	}
	state := filepath.Join(os.TempDir(), "gatewall-"+second.Name)
	pods, _ := l.Node.Network().Pods.MarshalText()
	if left := leftovers(second.Name, second.Prefix, string(pods), state); len(left) > 0 {
		t.Errorf("left behind after Stop:\n%s", strings.Join(left, "\n"))
	}
	after := hostSettings()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("host %s changed:\nbefore: %s\nafter:  %s", k, v, after[k])
		}
	}
}

// crashChildEnv makes the test binary run a runtime and wait to be killed
// (TestCrashedRuntime).
const crashChildEnv = "GATEWALL_LOCAL_CRASH_CHILD"

var crashed = localrun.Options{NodeName: "local-crash", Prefix: "gwlx", CIDR: "10.250.0.0/23", LoadBalancerCIDR: "127.0.6.0/24"}

func crashStateDir() string { return filepath.Join(os.TempDir(), "gatewall-"+crashed.NodeName) }

// crashChild starts a runtime, says "ready", and waits.
func crashChild() {
	o := crashed
	o.Root, o.StateDir = testenv.RepoRoot(), crashStateDir()
	if _, err := localrun.Start(context.Background(), o); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// TestCrashedRuntime: when the process running a runtime is killed, its
// watchdogs kill and remove everything it started (the node's processes,
// namespaces, cgroups, uplink; the control plane).
func TestCrashedRuntime(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		_ = cmd.Process.Kill()
		t.Fatalf("the runtime did not start: %q", line)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	killed := time.Now()
	state := crashStateDir()
	var left []string
	for time.Since(killed) < 30*time.Second {
		if left = leftovers(crashed.NodeName, crashed.Prefix, "10.250.0.0/24", state); len(left) == 0 {
			t.Logf("everything gone %s after the kill", time.Since(killed).Round(100*time.Millisecond))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("30s after the runtime's process was killed, left behind:\n%s", strings.Join(left, "\n"))
}
