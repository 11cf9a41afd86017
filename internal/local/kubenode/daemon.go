package kubenode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// daemon is one of the node's long-running processes (containerd, the
// kubelet, kube-proxy), run inside the sandbox with its output in a log file.
type daemon struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// startDaemon starts name (a program on the node's PATH) with args in the
// sandbox, logging to logDir/name.log.
func startDaemon(s *sandbox, logDir, name string, args ...string) (*daemon, error) {
	logPath := filepath.Join(logDir, filepath.Base(name)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("kubenode: creating the log of %s: %w", name, err)
	}
	defer logFile.Close() // the process has its own descriptor
	cmd := s.command(name, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubenode: starting %s: %w", name, err)
	}
	d := &daemon{name: filepath.Base(name), logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// alive fails when the daemon has exited, naming its log.
func (d *daemon) alive() error {
	select {
	case <-d.exited:
		return fmt.Errorf("kubenode: %s exited (%v); see %s", d.name, d.waitErr, d.logPath)
	default:
		return nil
	}
}

// stop sends SIGTERM, then SIGKILL after grace.
func (d *daemon) stop(grace time.Duration) error {
	_ = syscall.Kill(d.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(grace):
		_ = syscall.Kill(d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.exited
	}
	var exitErr *exec.ExitError
	if d.waitErr != nil && !errors.As(d.waitErr, &exitErr) {
		return fmt.Errorf("kubenode: %s: %w", d.name, d.waitErr)
	}
	return nil
}
