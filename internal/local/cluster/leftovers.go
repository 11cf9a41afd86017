package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// processesOf lists the processes whose command line names something inside
// workDir (other than this process).
func processesOf(workDir string) ([]int, error) {
	marker := []byte(workDir + string(filepath.Separator))
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, marker) && !isZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// killLeftovers kills the processes of workDir: control-plane processes of
// an earlier run that crashed before it could stop them.
func killLeftovers(workDir string) error {
	pids, err := processesOf(workDir)
	if err != nil {
		return err
	}
	var killed []int
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			killed = append(killed, pid)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range killed {
		for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("leftover process %d (from an earlier run in %s) does not die", pid, workDir)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// watchdogScript waits for the runtime's process to end, then kills the
// given processes. etcd and kube-apiserver are started by envtest, which
// gives them no parent-death signal; without the watchdog a crash of the
// runtime would leave them running until the next start.
const watchdogScript = `owner=$1; shift
while kill -0 "$owner" 2>/dev/null; do sleep 1; done
kill -9 "$@" 2>/dev/null`

// startWatchdog guards pids; Stop kills the watchdog first.
func startWatchdog(pids []int) (*exec.Cmd, error) {
	args := []string{"-c", watchdogScript, "gatewall-local-watchdog", strconv.Itoa(os.Getpid())}
	for _, p := range pids {
		args = append(args, strconv.Itoa(p))
	}
	cmd := exec.Command("sh", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the control-plane watchdog: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return cmd, nil
}
