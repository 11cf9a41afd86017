package podnet

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// inNamespace runs fn on an OS thread switched into the network namespace at
// path. Sockets fn creates stay in that namespace, and processes fn starts
// inherit it. The thread returns to the host namespace afterwards; if it
// cannot, it is left locked so that the Go runtime discards it.
func inNamespace(path string, fn func() error) error {
	target, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening network namespace %s: %w", path, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	host, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening the current network namespace: %w", err)
	}
	defer host.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering network namespace %s: %w", path, err)
	}
	fnErr := fn()
	if err := unix.Setns(int(host.Fd()), unix.CLONE_NEWNET); err != nil {
		// Keep the thread locked: it dies with this goroutine instead of
		// running other goroutines in the wrong namespace.
		return fmt.Errorf("returning from network namespace %s: %w", path, err)
	}
	runtime.UnlockOSThread()
	return fnErr
}

// namespacePath is where `ip netns` mounts a named namespace.
func namespacePath(name string) string { return "/run/netns/" + name }
