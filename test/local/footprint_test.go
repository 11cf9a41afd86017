package local

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFootprint reports the memory of the node's processes (the closing
// notes and docs/benchmarks.md quote it) and checks that the node runs
// exactly its three daemons, with one containerd shim per pod.
func TestFootprint(t *testing.T) {
	procs, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/pids", "gatewall-"+shared.Name, "daemons", "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	rss := map[string][]int{} // by command name, KiB
	comm := func(pid string) string {
		b, _ := os.ReadFile(filepath.Join("/proc", pid, "comm"))
		return strings.TrimSpace(string(b))
	}
	for _, f := range strings.Fields(string(procs)) {
		status, _ := os.ReadFile(filepath.Join("/proc", f, "status"))
		name := comm(f)
		if ppid := statusField(string(status), "PPid:"); ppid != "" && comm(ppid) == name {
			// A daemon's child between fork and exec (kube-proxy runs
			// iptables so): it is not another daemon.
			continue
		}
		if v := statusField(string(status), "VmRSS:"); v != "" {
			kb, _ := strconv.Atoi(strings.TrimSuffix(v, " kB"))
			rss[name] = append(rss[name], kb)
		}
	}
	for _, d := range []string{"kubelet", "containerd", "kube-proxy"} {
		if len(rss[d]) != 1 || rss[d][0] == 0 {
			t.Errorf("want one %s process in the node's daemons cgroup, got RSS %v KiB", d, rss[d])
		}
	}
	shims := rss["containerd-shim"]
	pods, err := rt.Clientset.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			running++
		}
	}
	if len(shims) != running {
		t.Errorf("%d containerd shims for %d pods", len(shims), running)
	}
	var names []string
	for n := range rss {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		total := 0
		for _, kb := range rss[n] {
			total += kb
		}
		parts = append(parts, n+" "+strconv.Itoa(len(rss[n]))+"x, "+strconv.Itoa(total/1024)+" MiB")
	}
	t.Logf("node processes (RSS) with %d pods: %s", running, strings.Join(parts, "; "))
}

// statusField is the value of a field of /proc/<pid>/status, "" if absent.
func statusField(status, field string) string {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
