package kubenode

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// watchdogScript waits for the process that started the node to end, then
// kills every process in the node's cgroups and removes them: without it, a
// crash of that process would leave containerd's shims and the pods (which
// are not its children) running, and with them the node's namespaces.
const watchdogScript = `owner=$1; shift
while kill -0 "$owner" 2>/dev/null; do sleep 1; done
i=0
while [ $i -lt 100 ]; do
  pids=$(cat $(find "$@" -name cgroup.procs 2>/dev/null) 2>/dev/null)
  [ -z "$pids" ] && break
  kill -9 $pids 2>/dev/null
  sleep 0.1; i=$((i + 1))
done
for d in "$@"; do find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done
exit 0`

// startWatchdog starts the watchdog of the cgroup tree, in its own process
// group so that a signal to this process's group does not reach it.
func startWatchdog(t cgroupTree) (*exec.Cmd, error) {
	args := append([]string{"-c", watchdogScript, "gatewall-node-watchdog", strconv.Itoa(os.Getpid())}, t.dirs()...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubenode: starting the watchdog: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return cmd, nil
}
