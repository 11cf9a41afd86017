package podnet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// acquireLock takes an exclusive lock for prefix, so that removing leftovers
// never removes the namespaces of a network that is still running.
func acquireLock(dir, prefix string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("podnet: creating lock dir: %w", err)
	}
	path := filepath.Join(dir, prefix+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("podnet: opening %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		owner, _ := os.ReadFile(path)
		f.Close()
		return nil, fmt.Errorf("podnet: another local node uses prefix %q (lock %s held by pid %s): %w",
			prefix, path, strings.TrimSpace(string(owner)), err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

func (n *Network) releaseLock() {
	if n.lock != nil {
		_ = n.lock.Close()
		n.lock = nil
	}
}

// removeLeftovers deletes every namespace named with this network's prefix
// (killing processes still inside) and the host uplink.
func (n *Network) removeLeftovers(ctx context.Context) error {
	out, err := n.ip.run(ctx, "netns", "list")
	if err != nil {
		return fmt.Errorf("podnet: %w", err)
	}
	var errs []error
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], n.prefix+"-") {
			continue
		}
		errs = append(errs, n.deleteNamespace(ctx, fields[0]))
	}
	// Deleting the node namespace destroys the uplink asynchronously; only
	// an uplink that outlives that (a crash between creating the two ends)
	// needs deleting.
	uplink := filepath.Join("/sys/class/net", n.uplink())
	if _, err := os.Stat(uplink); err == nil {
		if _, err := n.ip.run(ctx, "link", "del", n.uplink()); err != nil {
			if _, statErr := os.Stat(uplink); statErr == nil {
				errs = append(errs, fmt.Errorf("podnet: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// deleteNamespace kills the processes in namespace name and deletes it.
func (n *Network) deleteNamespace(ctx context.Context, name string) error {
	if err := n.killProcessesIn(ctx, name); err != nil {
		return err
	}
	if _, err := n.ip.run(ctx, "netns", "del", name); err != nil {
		return fmt.Errorf("podnet: %w", err)
	}
	return nil
}

func (n *Network) killProcessesIn(ctx context.Context, name string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := n.ip.run(ctx, "netns", "pids", name)
		if err != nil {
			return fmt.Errorf("podnet: %w", err)
		}
		pids := strings.Fields(out)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("podnet: processes %v in namespace %s do not die", pids, name)
		}
		for _, p := range pids {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
