package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// A pod's processes run on this host (the node has its own network and
// mount namespaces, not its own PID namespace): they are found by the
// pod's cgroup, and their /proc entries lead to the pod's network
// namespace and root filesystem.

// podProcess is the first process of pod uid whose command line starts with
// prefix ("" for any); 0 if there is none.
func podProcess(uid, prefix string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil || !strings.Contains(string(cg), "pod"+uid) {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasPrefix(strings.ReplaceAll(string(cmd), "\x00", " "), prefix) {
			return pid
		}
	}
	return 0
}

// waitProcess waits for podProcess(pod, prefix).
func waitProcess(t *testing.T, pod corev1.Pod, prefix string) int {
	t.Helper()
	var pid int
	testenv.Eventually(t, 60*time.Second, func() error {
		if pid = podProcess(string(pod.UID), prefix); pid == 0 {
			return fmt.Errorf("no process %q of pod %s on this host", prefix, pod.Name)
		}
		return nil
	})
	return pid
}

// inNetns runs a command in the network namespace of process pid.
func inNetns(pid int, name string, args ...string) error {
	cmd := exec.Command("nsenter", append([]string{"--net=" + filepath.Join("/proc", strconv.Itoa(pid), "ns", "net"), "--", name}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s in the network namespace of process %d: %w: %s", name, strings.Join(args, " "), pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// fault is a change to a pod's network that undo reverts.
type fault struct {
	pid  int
	undo [][]string
}

// do runs a command in the pod's network namespace and remembers the one
// that reverts it.
func (f *fault) do(t *testing.T, cmd, undo []string) {
	t.Helper()
	if err := inNetns(f.pid, cmd[0], cmd[1:]...); err != nil {
		t.Fatal(err)
	}
	f.undo = append(f.undo, undo)
}

// heal reverts every change, newest first. A pod that is gone has nothing
// left to revert.
func (f *fault) heal(t *testing.T) {
	t.Helper()
	for i := len(f.undo) - 1; i >= 0; i-- {
		if err := inNetns(f.pid, f.undo[i][0], f.undo[i][1:]...); err != nil {
			if _, gone := os.Stat(fmt.Sprintf("/proc/%d", f.pid)); gone == nil {
				t.Error(err)
			}
		}
	}
	f.undo = nil
}

// agentPort is the manager's agent server port inside its pod
// (config/manager: --agent-listen-address=:8443).
const agentPort = "8443"

// throttle limits what the pod sends (on its eth0) to rate, e.g. "1mbit":
// tc's token bucket, queueing up to a second of traffic.
func (f *fault) throttle(t *testing.T, rate string) {
	t.Helper()
	f.do(t, []string{"tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "16kb", "latency", "1s"},
		[]string{"tc", "qdisc", "del", "dev", "eth0", "root"})
}

// cutAgents resets every agent connection to the pod (the manager's) and
// refuses new ones: the agents' packets are answered with a TCP reset.
func (f *fault) cutAgents(t *testing.T) {
	t.Helper()
	rule := []string{"INPUT", "-p", "tcp", "--dport", agentPort, "-j", "REJECT", "--reject-with", "tcp-reset"}
	f.do(t, append([]string{"iptables", "-I"}, rule...), append([]string{"iptables", "-D"}, rule...))
}

// blackholeAgents drops every packet of the agents to the pod (the
// manager's): their connections hang and new ones time out.
func (f *fault) blackholeAgents(t *testing.T) {
	t.Helper()
	rule := []string{"INPUT", "-p", "tcp", "--dport", agentPort, "-j", "DROP"}
	f.do(t, append([]string{"iptables", "-I"}, rule...), append([]string{"iptables", "-D"}, rule...))
}

// onLeader starts a fault on the manager pod that leads now; the test's end
// heals it if the test did not.
func onLeader(t *testing.T) (*fault, corev1.Pod) {
	t.Helper()
	name := rt.LeaderName(context.Background())
	pod := corev1.Pod{}
	if err := rt.Client.Get(context.Background(), client.ObjectKey{Namespace: localrun.ManagerNamespace, Name: name}, &pod); err != nil {
		t.Fatalf("the leading manager pod %q: %v", name, err)
	}
	f := &fault{pid: waitProcess(t, pod, "")}
	t.Cleanup(func() { f.heal(t) })
	return f, pod
}

// dataPlanePods are the running pods of Gateway gw in namespace ns.
func dataPlanePods(ns, gw string) ([]corev1.Pod, error) {
	return rt.RunningPods(context.Background(), ns, map[string]string{provisioner.GatewayNameLabel: gw})
}

// ready says whether a pod is Ready.
func ready(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
