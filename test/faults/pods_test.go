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

	corev1 "k8s.io/api/core/v1"

	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

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
	pod := rt.LeaderPod(t)
	f := &fault{pid: testenv.WaitProcess(t, pod, "")}
	t.Cleanup(func() { f.heal(t) })
	return f, pod
}

// dataPlanePods are the running pods of Gateway gw in namespace ns.
func dataPlanePods(ns, gw string) ([]corev1.Pod, error) {
	return rt.RunningPods(context.Background(), ns, map[string]string{provisioner.GatewayNameLabel: gw})
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
