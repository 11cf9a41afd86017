package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// terminate ends a pod that is being deleted: preStop hooks and SIGTERM
// within the grace period, then SIGKILL; removes its network namespace and
// files; and, unless the object is already gone, deletes it with grace
// period 0, which is what lets namespace deletion finish.
func (w *podWorker) terminate(ctx context.Context, pod *corev1.Pod, gone bool) {
	if pod != nil {
		w.pod = pod
	}
	grace := w.gracePeriod()
	w.n.log.Info("terminating pod", "pod", klogRef(w.pod), "grace", grace, "objectGone", gone)
	for _, c := range w.containers {
		if c.running() {
			w.event(corev1.EventTypeNormal, "Killing", "Stopping container %s", c.spec.Name)
		}
	}
	w.killAll(grace)
	w.cleanup()
	if gone || w.pod == nil {
		return
	}
	uid := w.pod.UID
	err := w.n.client.CoreV1().Pods(w.pod.Namespace).Delete(ctx, w.pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptrTo(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !isNotFound(err) {
		w.n.log.Error(err, "deleting terminated pod", "pod", klogRef(w.pod))
		return
	}
	w.n.log.Info("pod deleted", "pod", klogRef(w.pod))
}

// shutdown stops the pod's containers and removes its sandbox when the node
// stops; the pod object is left alone.
func (w *podWorker) shutdown(maxGrace time.Duration) {
	grace := w.gracePeriod()
	if grace > maxGrace {
		grace = maxGrace
	}
	w.killAll(grace)
	w.cleanup()
}

// killAll runs preStop hooks and stops every running container in parallel
// within grace.
func (w *podWorker) killAll(grace time.Duration) {
	deadline := time.Now().Add(grace)
	var wg sync.WaitGroup
	for _, c := range w.containers {
		if c.stopProbes != nil {
			c.stopProbes()
			c.stopProbes = nil
		}
		if !c.running() {
			continue
		}
		wg.Add(1)
		go func(c *container) {
			defer wg.Done()
			if c.spec.Lifecycle != nil && c.spec.Lifecycle.PreStop != nil {
				hookCtx, cancel := context.WithDeadline(context.Background(), deadline)
				if err := w.runHook(hookCtx, c, c.spec.Lifecycle.PreStop); err != nil {
					w.n.log.Info("preStop hook failed", "pod", klogRef(w.pod), "container", c.spec.Name, "error", err)
				}
				cancel()
			}
			c.proc.stop(max(time.Until(deadline), 0))
		}(c)
	}
	wg.Wait()
	// The log completes when the last holder of the container's stdout
	// closes it; with the PID namespace gone that is at once, but a stuck
	// pipe must not hold up the pod's deletion.
	for _, c := range w.containers {
		if c.log != nil {
			select {
			case <-c.log.done:
			case <-time.After(2 * time.Second):
				w.n.log.Info("container log still open after the container stopped", "pod", klogRef(w.pod), "container", c.spec.Name)
			}
		}
	}
}

// runHook runs a lifecycle handler against the container.
func (w *podWorker) runHook(ctx context.Context, c *container, h *corev1.LifecycleHandler) error {
	switch {
	case h.Exec != nil:
		out, err := execInContainer(ctx, w.n.tools.nsenter, c.proc.pid(), nil, h.Exec.Command)
		if err != nil {
			return fmt.Errorf("exec %v: %w: %s", h.Exec.Command, err, out)
		}
		return nil
	case h.HTTPGet != nil:
		port, err := resolvePort(h.HTTPGet.Port, c.spec)
		if err != nil {
			return err
		}
		host := hostOr(h.HTTPGet.Host, w.sandbox.IP.String())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			"http://"+net.JoinHostPort(host, strconv.Itoa(port))+h.HTTPGet.Path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	case h.Sleep != nil:
		sleepCtx(ctx, time.Duration(h.Sleep.Seconds)*time.Second)
		return nil
	}
	return fmt.Errorf("unsupported lifecycle handler")
}

// cleanup removes the pod's network namespace and files.
func (w *podWorker) cleanup() {
	if w.sandbox != nil {
		if err := w.n.network.RemovePod(context.Background(), w.sandbox); err != nil {
			w.n.log.Error(err, "removing pod sandbox", "pod", klogRef(w.pod))
		}
		w.sandbox = nil
	}
	if err := os.RemoveAll(w.dir); err != nil {
		w.n.log.Error(err, "removing pod files", "pod", klogRef(w.pod))
	}
}
