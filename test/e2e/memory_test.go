package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/test/testenv"
)

// memory is the manager's memory in bytes.
type memory struct{ rss, peak, heap uint64 }

// managerMemory reads the memory of the manager's process, found on the host
// by its pod's cgroup, and its Go heap from its metrics endpoint (HTTPS,
// with a token allowed to read it); the test fails if either is missing.
func managerMemory(t *testing.T) memory {
	t.Helper()
	pods, err := rt.ManagerPods(context.Background())
	if err != nil || len(pods) != 1 {
		t.Fatalf("want one manager pod, got %d (%v)", len(pods), err)
	}
	pod := pods[0]
	pid, err := processOfPod(string(pod.UID), "gatewall")
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	var m memory
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			m.rss = kb << 10
		case "VmHWM":
			m.peak = kb << 10
		}
	}
	token := rt.MetricsToken(t, fmt.Sprintf("e2e-memory-%d", time.Now().UnixNano()), true)
	m.heap = uint64(testenv.Gauge(t, testenv.ManagerMetrics(t, pod, token), "go_memstats_heap_inuse_bytes"))
	return m
}

// processOfPod finds the host PID of the process named comm in the pod
// with the given UID (its cgroup path names the pod).
func processOfPod(uid, comm string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	marker := "pod" + uid
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if strings.TrimSpace(string(name)) != comm {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if strings.Contains(string(cg), marker) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process %q in pod %s", comm, uid)
}
