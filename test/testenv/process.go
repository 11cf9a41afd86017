package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A pod's processes run on this host (the local runtime's node has its own
// network and mount namespaces, not its own PID namespace): they are found
// by the pod's cgroup, and their /proc entries lead to the pod's network
// namespace and root filesystem.

// PodProcess is the first process of pod uid whose command line starts with
// prefix ("" for any); 0 if there is none.
func PodProcess(uid, prefix string) int {
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

// WaitProcess waits for PodProcess(pod, prefix).
func WaitProcess(t *testing.T, pod corev1.Pod, prefix string) int {
	t.Helper()
	var pid int
	Eventually(t, 60*time.Second, func() error {
		if pid = PodProcess(string(pod.UID), prefix); pid == 0 {
			return fmt.Errorf("no process %q of pod %s on this host", prefix, pod.Name)
		}
		return nil
	})
	return pid
}

// Children are the child processes of pid (of all its threads).
func Children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// RSS is the resident memory of process pid, in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("process %d: no VmRSS in its status", pid)
}

// ClockTick is the unit of process times in /proc (USER_HZ, 100 on Linux).
const ClockTick = 10 * time.Millisecond

// ProcStat is what /proc/PID/stat says of a process: its command name and
// its times, in the file's clock ticks' unit converted to durations.
type ProcStat struct {
	Comm string
	// Start is when it started, since boot; it tells a process from a
	// later one that reuses its pid.
	Start time.Duration
	// CPU is the time it used (user and system); Children, that of the
	// children it reaped.
	CPU, Children time.Duration
}

// ProcessStat reads process pid's /proc/PID/stat; false if it is gone.
func ProcessStat(pid int) (ProcStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, false
	}
	// The command name is in parentheses and may hold spaces and
	// parentheses. The fields after it start with the third, state: utime
	// is the 14th, stime, cutime and cstime the next three, starttime the
	// 22nd.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return ProcStat{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return ProcStat{}, false
	}
	tick := func(i int) time.Duration {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(n) * ClockTick
	}
	return ProcStat{Comm: string(b[open+1 : end]), Start: tick(19), CPU: tick(11) + tick(12), Children: tick(13) + tick(14)}, true
}

// ProcessTimes are process pid's start (since boot) and the CPU time it
// used so far (user and system); zero if it is gone.
func ProcessTimes(pid int) (start, cpu time.Duration) {
	st, _ := ProcessStat(pid)
	return st.Start, st.CPU
}

// Ready says whether a pod is Ready.
func Ready(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
