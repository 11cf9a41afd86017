// Package netns runs code inside another network namespace: sockets created
// there stay in it (a listener on a node's address, say), whatever thread
// later serves them.
package netns

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Do runs fn on an OS thread switched into the network namespace at path
// (/proc/PID/ns/net, or a bind mount of one). The thread returns to its own
// namespace afterwards; if it cannot, it stays locked so that the Go runtime
// discards it rather than run other goroutines in the wrong namespace.
func Do(path string, fn func() error) error {
	target, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening network namespace %s: %w", path, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	own, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("opening the current network namespace: %w", err)
	}
	defer own.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering network namespace %s: %w", path, err)
	}
	fnErr := fn()
	if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("returning from network namespace %s: %w", path, err)
	}
	runtime.UnlockOSThread()
	return fnErr
}
