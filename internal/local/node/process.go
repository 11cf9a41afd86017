package node

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/gatewall/gatewall/internal/local/podnet"
)

// setupScript runs as the container's first process, inside its fresh mount,
// PID and UTS namespaces (and the pod's network namespace): it makes the
// mounts private, mounts a /proc that shows only the container's processes,
// bind-mounts the volumes, sets the hostname and execs the container's
// command, which thereby becomes PID 1 as in a container.
// Arguments: mount-binary hostname workdir {ro|rw source target}... -- argv...
const setupScript = `set -e
m=$1; h=$2; wd=$3; shift 3
"$m" --make-rprivate /
"$m" -t proc proc /proc
while [ "$1" != "--" ]; do
  "$m" --bind "$2" "$3" || { echo "local node: cannot mount $2 at $3" >&2; exit 128; }
  if [ "$1" = ro ]; then "$m" -o remount,bind,ro "$3"; fi
  shift 3
done
shift
printf %s "$h" > /proc/sys/kernel/hostname
cd "$wd"
exec "$@"
`

// bindMount is a host path bind-mounted into the container.
type bindMount struct {
	source, target string
	readOnly       bool
}

// processSpec is everything needed to start one container process.
type processSpec struct {
	argv           []string
	env            []string
	workingDir     string
	hostname       string
	mounts         []bindMount
	sandbox        *podnet.Sandbox
	stdout, stderr *os.File
}

// process is a running container process (PID 1 of its PID namespace).
type process struct {
	cmd      *exec.Cmd
	started  time.Time
	exited   chan struct{}
	finished time.Time
	state    *os.ProcessState
	waitErr  error
}

func startProcess(t tools, spec processSpec) (*process, error) {
	args := []string{"-c", setupScript, "container-setup", t.mount, spec.hostname, spec.workingDir}
	for _, m := range spec.mounts {
		mode := "rw"
		if m.readOnly {
			mode = "ro"
		}
		args = append(args, mode, m.source, m.target)
	}
	args = append(append(args, "--"), spec.argv...)
	cmd := exec.Command(t.sh, args...)
	cmd.Env = spec.env
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = spec.stdout, spec.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS,
		Setpgid:    true,
		// If the node process dies, the container's PID 1 dies, and with it
		// every process of its PID namespace.
		Pdeathsig: syscall.SIGKILL,
	}
	// Started from a thread inside the pod's network namespace, the process
	// inherits it.
	if err := spec.sandbox.Do(cmd.Start); err != nil {
		return nil, fmt.Errorf("starting %v: %w", spec.argv, err)
	}
	p := &process{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		p.state = cmd.ProcessState
		p.finished = time.Now()
		close(p.exited)
	}()
	return p, nil
}

// pid is the process's PID in the host's PID namespace.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exitCode reports the exit status as a container runtime does: the exit
// code, or 128+signal for a process killed by a signal.
func (p *process) exitCode() int32 {
	if p.state == nil {
		return -1
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(p.state.ExitCode())
}

// signal sends sig to the process's group (PID 1's descendants die with it
// anyway: the kernel kills a PID namespace when its init exits).
func (p *process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.pid(), sig)
	_ = syscall.Kill(p.pid(), sig)
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the exit.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.signal(syscall.SIGKILL)
		<-p.exited
	}
}
