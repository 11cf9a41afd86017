package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// memory is the manager's memory in bytes.
type memory struct{ rss, peak, heap uint64 }

// managerMemory reads the memory of the manager's process, found on the host
// by its pod's cgroup, and its Go heap from its metrics endpoint.
func managerMemory(ctx context.Context) (memory, error) {
	pods, err := rt.ManagerPods(ctx)
	if err != nil || len(pods) != 1 {
		return memory{}, fmt.Errorf("want one manager pod, got %d (%v)", len(pods), err)
	}
	pod := pods[0]
	pid, err := processOfPod(string(pod.UID), "gatewall")
	if err != nil {
		return memory{}, err
	}
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return memory{}, err
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
	resp, err := http.Get("http://" + pod.Status.PodIP + ":8080/metrics")
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return m, err
			}
			m.heap = uint64(f)
		}
	}
	return m, s.Err()
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
