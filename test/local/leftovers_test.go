package local

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// leftovers lists what the runtime must not leave behind: network
// namespaces and host links named with prefix, a host route for cidr,
// child processes of this process, and mounts under the test work dir.
func leftovers(prefix, cidr string) []string {
	var left []string
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], prefix+"-") {
				left = append(left, "netns "+f[0])
			}
		}
	}
	if links, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, l := range links {
			if strings.HasPrefix(l.Name(), prefix) {
				left = append(left, "link "+l.Name())
			}
		}
	}
	if out, _ := exec.Command("ip", "route", "show", cidr).Output(); len(bytes.TrimSpace(out)) > 0 {
		left = append(left, "route "+strings.TrimSpace(string(out)))
	}
	self := strconv.Itoa(os.Getpid())
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised name: state, ppid, ...
		i := bytes.LastIndexByte(stat, ')')
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == self && f[0] != "Z" {
			cmd, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
			left = append(left, "process "+p.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(mi), "\n") {
			if strings.Contains(line, "gatewall-local-test") || strings.Contains(line, "/run/netns/"+prefix+"-") {
				left = append(left, "mount "+line)
			}
		}
	}
	return left
}
