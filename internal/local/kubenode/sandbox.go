package kubenode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemonsCgroup is the cgroup, inside the node's tree, of the sandbox holder,
// containerd (and its shims), the kubelet and kube-proxy; the kubelet puts
// pods in <tree>/kubepods.
const daemonsCgroup = "daemons"

// joinScript makes the shell that runs it join the node's cgroups (the files
// in $GATEWALL_CGROUP_PROCS) before it execs its arguments: whatever they
// start is in the node's tree from its first instruction.
const joinScript = `for f in $GATEWALL_CGROUP_PROCS; do echo $$ >"$f" || exit 1; done; exec "$@"`

// sandbox is the node's network and mount namespaces, held by a sleeping
// process that is in the node's cgroup tree.
type sandbox struct {
	cgroups cgroupTree
	holder  *exec.Cmd
	pid     int
}

// startSandbox starts the holder in new network and mount namespaces.
func startSandbox(cgroups cgroupTree) (*sandbox, error) {
	s := &sandbox{cgroups: cgroups}
	cmd := s.joined("unshare", "--net", "--mount", "--propagation", "private", "sleep", "infinity")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubenode: starting the sandbox: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	s.holder, s.pid = cmd, cmd.Process.Pid
	// The namespaces exist once unshare has exec'ed sleep.
	deadline := time.Now().Add(10 * time.Second)
	for {
		host, _ := os.Readlink("/proc/self/ns/net")
		own, err := os.Readlink(s.nsPath("net"))
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", s.pid))
		if err == nil && own != host && strings.TrimSpace(string(comm)) == "sleep" {
			return s, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("kubenode: the sandbox's namespaces did not appear (process %d)", s.pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// joined is a command that runs name with args in the node's cgroups (but in
// this process's namespaces), killed if this process dies.
func (s *sandbox) joined(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", append([]string{"-c", joinScript, "gatewall-node", name}, args...)...)
	env := []string{"PATH=" + nodePath, "GATEWALL_CGROUP_PROCS=" + strings.Join(s.cgroups.procsFiles(daemonsCgroup), " ")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// command is a command that runs name with args inside the sandbox: its
// cgroups and its network and mount namespaces. nsenter starts it in / (the
// mount namespace's root): paths must be absolute.
func (s *sandbox) command(name string, args ...string) *exec.Cmd {
	return s.joined("nsenter", append([]string{"--target", strconv.Itoa(s.pid), "--mount", "--net", "--", name}, args...)...)
}

// run runs a short command inside the sandbox; its error carries its output.
func (s *sandbox) run(ctx context.Context, name string, args ...string) error {
	cmd := s.command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s %s in the node: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
		}
		return nil
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		killed := <-done
		return fmt.Errorf("%s in the node: %w (killed: %v)", name, ctx.Err(), killed)
	}
}

// nsPath is the path of one of the sandbox's namespaces.
func (s *sandbox) nsPath(kind string) string {
	return fmt.Sprintf("/proc/%d/ns/%s", s.pid, kind)
}

// path is a path inside the sandbox's mount namespace, seen from the host.
func (s *sandbox) path(p string) string {
	return filepath.Join(fmt.Sprintf("/proc/%d/root", s.pid), p)
}
