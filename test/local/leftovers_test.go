package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// hostSettings are what a node must not change on the host: the kernel
// settings the kubelet writes (global to the machine) and the host's own
// iptables rules.
func hostSettings() map[string]string {
	out := map[string]string{}
	for _, s := range []string{"kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys",
		"kernel/keys/root_maxbytes", "vm/overcommit_memory", "vm/panic_on_oom", "net/ipv4/ip_forward"} {
		v, err := os.ReadFile(filepath.Join("/proc/sys", s))
		out[s] = strings.TrimSpace(string(v)) + errString(err)
	}
	rules, err := exec.Command("iptables-save").Output()
	var kept []string
	for _, l := range strings.Split(string(rules), "\n") {
		if !strings.HasPrefix(l, "#") {
			kept = append(kept, l)
		}
	}
	out["iptables"] = strings.Join(kept, "\n") + errString(err)
	return out
}

func errString(err error) string {
	if err != nil {
		return " (" + err.Error() + ")"
	}
	return ""
}

// leftovers lists what remains on the host of the runtime whose node is
// named node, with link prefix prefix, pod subnet pods and state directory
// state: its cgroups, processes, host link, route and mounts.
func leftovers(node, prefix, pods, state string) []string {
	var left []string
	cgroup := "gatewall-" + node
	dirs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", cgroup))
	for _, d := range dirs {
		left = append(left, "cgroup "+d)
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		cg, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cgroup"))
		if err == nil && strings.Contains(string(cg), "/"+cgroup+"/") {
			cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
			left = append(left, "process "+p.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if strings.Contains(string(cmd), state+string(filepath.Separator)) {
			left = append(left, "process "+p.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", prefix+"-up")); err == nil {
		left = append(left, "link "+prefix+"-up")
	}
	if out, _ := exec.Command("ip", "route", "show", "exact", pods).Output(); strings.TrimSpace(string(out)) != "" {
		left = append(left, "route "+strings.TrimSpace(string(out)))
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, state) {
				left = append(left, "mount "+line)
			}
		}
	}
	if ns, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ns {
			if strings.HasPrefix(e.Name(), prefix) {
				left = append(left, "netns "+e.Name())
			}
		}
	}
	sort.Strings(left)
	return left
}
