package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// container is the node's record of one container of a pod, across restarts.
type container struct {
	spec *corev1.Container
	init bool

	// The current instance, while one is running.
	proc       *process
	id         string // 64 hex characters, per instance
	log        *logWriter
	stopProbes context.CancelFunc
	ready      bool // readiness of the current instance
	started    bool // startup probe passed (or none)
	unhealthy  bool // liveness failed: kill and restart

	restartCount int32
	exits        int       // instances that exited, for the back-off
	nextStart    time.Time // no start before this (back-off)
	lastExit     *corev1.ContainerStateTerminated
	finished     bool                          // exited and will not be restarted
	waiting      *corev1.ContainerStateWaiting // why it is not running
	previousLog  string                        // log of the previous instance, for previous=true
}

// instanceID derives a container ID from the pod UID, container name and
// instance number: deterministic, 64 hex characters like a runtime's.
func instanceID(podUID, name string, instance int32) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", podUID, name, instance)))
	return hex.EncodeToString(sum[:])
}

// running reports whether an instance is running.
func (c *container) running() bool {
	if c.proc == nil {
		return false
	}
	select {
	case <-c.proc.exited:
		return false
	default:
		return true
	}
}

// recordExit turns the exited instance into lastExit, stops its probes and
// computes the back-off before the next start: none for the first restart,
// then initial, doubling up to max, as the kubelet does.
func (c *container) recordExit(initial, max time.Duration) {
	p := c.proc
	if c.stopProbes != nil {
		c.stopProbes()
		c.stopProbes = nil
	}
	code := p.exitCode()
	reason := "Completed"
	switch {
	case code == 128:
		reason = "StartError"
	case code != 0:
		reason = "Error"
	}
	term := &corev1.ContainerStateTerminated{
		ExitCode:    code,
		Reason:      reason,
		StartedAt:   metav1.NewTime(p.started).Rfc3339Copy(),
		FinishedAt:  metav1.NewTime(p.finished).Rfc3339Copy(),
		ContainerID: "local://" + c.id,
	}
	if code != 0 && c.spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError && c.log != nil {
		select {
		case <-c.log.done:
		case <-time.After(time.Second):
		}
		term.Message = c.log.lastLines(80)
	}
	c.lastExit = term
	c.proc = nil
	c.ready, c.started, c.unhealthy = false, false, false
	if c.log != nil {
		c.previousLog = c.log.path
	}
	// A long healthy run resets the back-off, as the kubelet's expiry does.
	if p.finished.Sub(p.started) > 10*time.Minute {
		c.exits = 0
	}
	c.exits++
	delay := time.Duration(0)
	if c.exits > 1 {
		delay = initial << (c.exits - 2)
		if delay > max || delay <= 0 {
			delay = max
		}
	}
	c.nextStart = p.finished.Add(delay)
}

// shouldRestart applies the restart policy to the last exit. Init
// containers never restart after success.
func (c *container) shouldRestart(policy corev1.RestartPolicy) bool {
	if c.lastExit == nil {
		return true
	}
	failed := c.lastExit.ExitCode != 0
	switch {
	case c.init:
		return failed && policy != corev1.RestartPolicyNever
	case policy == corev1.RestartPolicyAlways:
		return true
	case policy == corev1.RestartPolicyOnFailure:
		return failed
	}
	return false
}

// logPath is where instance n of the container logs.
func logPath(podDir, name string, n int32) string {
	return filepath.Join(podDir, "logs", name, fmt.Sprintf("%d.log", n))
}

// idDir is the directory whose path carries the instance's container ID.
func idDir(podDir, id string) (string, error) {
	d := filepath.Join(podDir, "containers", id)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("creating container dir: %w", err)
	}
	return d, nil
}
