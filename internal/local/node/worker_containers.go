package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// reconcileContainers records exits, kills unhealthy instances, runs the
// init containers one after another to completion and then starts the app
// containers, honouring the restart policy and back-off.
func (w *podWorker) reconcileContainers(ctx context.Context) {
	policy := w.pod.Spec.RestartPolicy
	opts := w.n.opts
	for _, c := range w.containers {
		if c.proc != nil && !c.running() {
			c.recordExit(opts.RestartBackoff, opts.MaxRestartBackoff)
			c.finished = !c.shouldRestart(policy)
			w.n.log.Info("container exited", "pod", klogRef(w.pod), "container", c.spec.Name,
				"exitCode", c.lastExit.ExitCode, "restarting", !c.finished)
		}
		if c.unhealthy && c.running() {
			c.unhealthy = false
			w.n.log.Info("probe failed; killing container", "pod", klogRef(w.pod), "container", c.spec.Name)
			w.event(corev1.EventTypeNormal, "Killing", "Container %s failed a probe, will be restarted", c.spec.Name)
			go c.proc.stop(w.gracePeriod())
		}
	}
	w.initDone = true
	for _, c := range w.containers {
		if !c.init {
			continue
		}
		if c.finished && c.lastExit.ExitCode == 0 {
			continue
		}
		w.initDone = false
		if !c.finished && !c.running() {
			w.startContainer(ctx, c)
		}
		// Later init containers and the app containers wait for this one.
		return
	}
	for _, c := range w.containers {
		if !c.init && !c.finished && !c.running() {
			w.startContainer(ctx, c)
		}
	}
}

// startContainer starts a new instance of c, or records why it cannot.
func (w *podWorker) startContainer(ctx context.Context, c *container) {
	spec := c.spec
	if now := time.Now(); now.Before(c.nextStart) {
		c.waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s",
				c.nextStart.Sub(c.lastExit.FinishedAt.Time).Round(time.Second), spec.Name, klogRef(w.pod))}
		w.event(corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", spec.Name)
		return
	}
	runner, ok := w.n.opts.Images.Lookup(spec.Image)
	if !ok {
		c.waiting = &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull",
			Message: fmt.Sprintf("image %q has no local runner: the local node runs images as host processes "+
				"and its image table has no entry for repository %s", spec.Image, Repository(spec.Image))}
		w.event(corev1.EventTypeWarning, "ErrImageNeverPull", "%s", c.waiting.Message)
		return
	}
	if err := w.startInstance(ctx, c, runner); err != nil {
		w.n.log.Info("cannot start container", "pod", klogRef(w.pod), "container", spec.Name, "error", err)
		reason := "CreateContainerConfigError"
		var se *startError
		if errors.As(err, &se) {
			reason = "RunContainerError"
		}
		c.waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}
		w.event(corev1.EventTypeWarning, "Failed", "Error: %v", err)
		w.retryAt = time.Now().Add(2 * time.Second)
	}
}

func (w *podWorker) startInstance(ctx context.Context, c *container, runner Runner) error {
	spec := c.spec
	facts := w.facts()
	env, err := containerEnv(ctx, w.n.api, w.pod, spec, runner, facts)
	if err != nil {
		return err
	}
	argv, err := runner.argv(spec)
	if err != nil {
		return err
	}
	for i := range argv {
		argv[i] = expand(argv[i], env.values)
	}
	if _, err := findProgram(argv[0], env.values["PATH"]); err != nil {
		msg := fmt.Sprintf("cannot run %s for image %s: %v", argv[0], spec.Image, err)
		if runner.Hint != "" && len(runner.Command) > 0 && argv[0] == runner.Command[0] {
			msg += "; " + runner.Hint
		}
		return &startError{msg: msg}
	}
	instance := c.restartCount
	if c.lastExit != nil {
		instance++
	}
	id := instanceID(string(w.uid), spec.Name, instance)
	idPath, err := idDir(w.dir, id)
	if err != nil {
		return err
	}
	mounts, err := containerMounts(spec, w.volPaths, env.values, map[string]string{"/etc/hosts": w.hosts, "/etc/resolv.conf": w.resolv}, idPath)
	if err != nil {
		return err
	}
	created, err := ensureMountPoints(mounts)
	if len(created) > 0 {
		w.n.noteCreatedMountPoints(created)
	}
	if err != nil {
		return err
	}
	workDir := spec.WorkingDir
	if workDir == "" {
		workDir = runner.WorkingDir
	}
	if workDir == "" {
		workDir = "/"
	}
	lp := logPath(w.dir, spec.Name, instance)
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return fmt.Errorf("creating log dir: %w", err)
	}
	lw, stdout, stderr, err := newLogWriter(lp)
	if err != nil {
		return err
	}
	proc, err := startProcess(w.n.tools, processSpec{
		argv: argv, env: env.list(), workingDir: workDir, hostname: podHostname(w.pod),
		mounts: mounts, sandbox: w.sandbox, stdout: stdout, stderr: stderr,
	})
	// The process holds its own copies; the log completes when it exits.
	stdout.Close()
	stderr.Close()
	if err != nil {
		return err
	}
	if c.lastExit != nil {
		c.restartCount++
	}
	c.proc, c.id, c.log, c.waiting = proc, id, lw, nil
	c.ready, c.unhealthy = false, false
	c.started = spec.StartupProbe == nil
	w.event(corev1.EventTypeNormal, "Started", "Started container %s", spec.Name)
	w.n.log.Info("container started", "pod", klogRef(w.pod), "container", spec.Name,
		"pid", proc.pid(), "restartCount", c.restartCount, "argv", argv)
	go func() {
		<-proc.exited
		w.poke()
	}()
	if !c.init {
		w.startProbes(c, probeTarget{podIP: w.sandbox.IP.String(), container: spec, pid: proc.pid(),
			env: env.list(), nsenter: w.n.tools.nsenter})
	}
	return nil
}

// startProbes runs the instance's probes until it exits: the startup probe
// first, then readiness (or, without one, a check that every declared port
// accepts connections) and liveness.
func (w *podWorker) startProbes(c *container, t probeTarget) {
	ctx, cancel := context.WithCancel(context.Background())
	c.stopProbes = cancel
	id := c.id
	current := func() bool { return c.id == id && c.proc != nil }
	main := func() {
		setReady := func(ok bool, detail string) {
			w.post(func() {
				c.ready = ok && current()
				if !ok && current() {
					w.event(corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: %s", detail)
				}
			})
		}
		if p := c.spec.ReadinessProbe; p != nil {
			go runProbe(ctx, p, t, setReady)
		} else {
			go waitForPorts(ctx, t, setReady)
		}
		if p := c.spec.LivenessProbe; p != nil {
			go runProbe(ctx, p, t, func(ok bool, detail string) {
				w.post(func() {
					if !ok && current() {
						c.unhealthy = true
						w.event(corev1.EventTypeWarning, "Unhealthy", "Liveness probe failed: %s", detail)
					}
				})
			})
		}
	}
	if p := c.spec.StartupProbe; p != nil {
		go runProbe(ctx, p, t, func(ok bool, detail string) {
			w.post(func() {
				if !current() || c.started {
					return
				}
				if ok {
					c.started = true
					main()
					return
				}
				c.unhealthy = true
				w.event(corev1.EventTypeWarning, "Unhealthy", "Startup probe failed: %s", detail)
			})
		})
		return
	}
	main()
}

// gracePeriod is the pod's termination grace period.
func (w *podWorker) gracePeriod() time.Duration {
	if w.pod != nil && w.pod.DeletionGracePeriodSeconds != nil {
		return time.Duration(*w.pod.DeletionGracePeriodSeconds) * time.Second
	}
	if w.pod != nil && w.pod.Spec.TerminationGracePeriodSeconds != nil {
		return time.Duration(*w.pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

// startError is a container that cannot be started (as opposed to one
// whose configuration cannot be resolved).
type startError struct{ msg string }

func (e *startError) Error() string { return e.msg }
