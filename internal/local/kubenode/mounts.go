package kubenode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// kubeletSysctls are the kernel settings the kubelet sets at every start
// (container_manager_linux.go, setupKernelTunables). They are global to the
// machine, not per namespace: the node gets private copies (files bound over
// them in its mount namespace), initialised with the host's values, which
// the kubelet then rewrites.
var kubeletSysctls = []string{
	"kernel/keys/root_maxbytes", "kernel/keys/root_maxkeys", "kernel/panic", "kernel/panic_on_oops",
	"vm/overcommit_memory", "vm/panic_on_oom",
}

// Directories of the state directory bound into the node's mount namespace;
// Stop removes those that are not logs.
var stateMounts = []struct {
	state, node string
	logs        bool
}{
	{"containerd", "/var/lib/containerd", false},
	{"kubelet", "/var/lib/kubelet", false},
	{"cni", "/var/lib/cni", false},
	{"pod-logs", "/var/log/pods", true},
}

// mountScript gives the node its own /run, /var/lib and /var/log, binds
// the state directories and the kernel settings' copies. $1 is the state
// directory, $2 the binds (lines of a state directory and its mount point);
// the other arguments are pairs of a copy and the /proc/sys file it hides.
const mountScript = `set -e
state=$1 binds=$2; shift 2
for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=0755 gatewall-node "$d"; done
mkdir -p /var/log/containers
echo "$binds" | while read -r from to; do mkdir -p "$to"; mount --bind "$state/$from" "$to"; done
while [ $# -gt 0 ]; do mount --bind "$1" "$2"; shift 2; done`

// setupMounts prepares the state directory and mounts it in the sandbox.
func setupMounts(ctx context.Context, s *sandbox, stateDir string) error {
	var binds []string
	for _, m := range stateMounts {
		if err := os.MkdirAll(filepath.Join(stateDir, m.state), 0o755); err != nil {
			return err
		}
		binds = append(binds, m.state+" "+m.node)
	}
	args := []string{"-c", mountScript, "gatewall-node-mounts", stateDir, strings.Join(binds, "\n")}
	sysctlDir := filepath.Join(stateDir, "sysctl")
	if err := os.MkdirAll(sysctlDir, 0o755); err != nil {
		return err
	}
	for _, name := range kubeletSysctls {
		host := filepath.Join("/proc/sys", name)
		value, err := os.ReadFile(host)
		if err != nil {
			return fmt.Errorf("kubenode: reading %s: %w", host, err)
		}
		copyPath := filepath.Join(sysctlDir, strings.ReplaceAll(name, "/", "."))
		if err := os.WriteFile(copyPath, value, 0o644); err != nil {
			return err
		}
		args = append(args, copyPath, host)
	}
	if err := s.run(ctx, "/bin/sh", args...); err != nil {
		return fmt.Errorf("kubenode: mounting the node's directories: %w", err)
	}
	return nil
}
