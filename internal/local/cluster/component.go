package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// component is a control-plane process this package starts itself
// (kube-controller-manager, kube-scheduler).
type component struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// startComponent starts bin with args (plus --secure-port on a free loopback
// port) and waits until its /healthz answers ok.
func startComponent(ctx context.Context, name, bin string, args []string, logDir string, timeout time.Duration) (*component, error) {
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	args = append(args, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port))
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: creating log: %w", name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig ties the component to this process: if the runtime crashes,
	// the component dies with it instead of lingering.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting %s: %w", name, bin, err)
	}
	c := &component{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	if err := c.waitHealthy(ctx, port, timeout); err != nil {
		_ = c.stop() // not healthy: that error is the one to report
		return nil, err
	}
	return c, nil
}

func (c *component) waitHealthy(ctx context.Context, port int, timeout time.Duration) error {
	client := &http.Client{
		Timeout: time.Second,
		// The component serves /healthz with a self-signed certificate; the
		// probe only needs to know that it answers.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited during start (%v); see %s", c.name, c.waitErr, c.logPath)
		case <-deadline.C:
			return fmt.Errorf("%s not healthy after %s; see %s", c.name, timeout, c.logPath)
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", c.name, ctx.Err())
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM to the component's process group and SIGKILL after 10s.
func (c *component) stop() error {
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.exited
	}
	var exitErr *exec.ExitError
	if c.waitErr != nil && !errors.As(c.waitErr, &exitErr) {
		return fmt.Errorf("%s: %w", c.name, c.waitErr)
	}
	return nil
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
