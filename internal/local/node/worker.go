package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/local/podnet"
)

// podWorker runs one pod, like the kubelet's pod worker: a goroutine that
// owns all of the pod's state and reconciles it with the latest pod object
// whenever the pod changes, a process exits, a probe reports or a timer
// fires.
type podWorker struct {
	n   *Node
	uid types.UID
	dir string

	mu     sync.Mutex
	latest *corev1.Pod // newest object seen by the informer
	gone   bool        // the object was removed from the API

	kick   chan struct{}
	events chan func()
	done   chan struct{}

	// Owned by the worker goroutine.
	pod        *corev1.Pod
	startTime  time.Time
	sandbox    *podnet.Sandbox
	volumes    *podVolumes
	volPaths   map[string]string
	volumesAt  time.Time
	hosts      string
	resolv     string
	blocked    *corev1.ContainerStateWaiting // pod-level reason containers cannot start
	retryAt    time.Time
	containers []*container // init containers first, in spec order
	initDone   bool
	lastPushed *corev1.PodStatus
}

func newPodWorker(n *Node, pod *corev1.Pod) *podWorker {
	dir := filepath.Join(n.podsDir(), string(pod.UID))
	w := &podWorker{
		n: n, uid: pod.UID, dir: dir, latest: pod,
		kick:    make(chan struct{}, 1),
		events:  make(chan func(), 64),
		done:    make(chan struct{}),
		volumes: &podVolumes{root: filepath.Join(dir, "volumes"), api: n.api},
	}
	for i := range pod.Spec.InitContainers {
		w.containers = append(w.containers, &container{spec: &pod.Spec.InitContainers[i], init: true})
	}
	for i := range pod.Spec.Containers {
		w.containers = append(w.containers, &container{spec: &pod.Spec.Containers[i]})
	}
	return w
}

// update hands the worker a newer pod object (or its removal).
func (w *podWorker) update(pod *corev1.Pod, gone bool) {
	w.mu.Lock()
	if pod != nil {
		w.latest = pod
	}
	w.gone = w.gone || gone
	w.mu.Unlock()
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// post runs f on the worker goroutine (for probe results).
func (w *podWorker) post(f func()) {
	select {
	case w.events <- f:
	case <-w.done:
	}
}

func (w *podWorker) snapshot() (*corev1.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest, w.gone
}

func (w *podWorker) run(ctx context.Context) {
	defer close(w.done)
	resync := time.NewTicker(w.n.opts.ResyncPeriod)
	defer resync.Stop()
	for {
		if w.sync(ctx) {
			return
		}
		wake := time.NewTimer(w.nextWake())
		select {
		case <-ctx.Done():
			wake.Stop()
			w.shutdown(w.n.opts.StopGracePeriod)
			return
		case <-w.kick:
		case f := <-w.events:
			f()
		case <-wake.C:
		case <-resync.C:
		}
		wake.Stop()
	}
}

// nextWake is how long until a back-off or retry expires.
func (w *podWorker) nextWake() time.Duration {
	next := w.retryAt
	for _, c := range w.containers {
		if c.proc == nil && !c.finished && c.nextStart.After(time.Now()) && (next.IsZero() || c.nextStart.Before(next)) {
			next = c.nextStart
		}
	}
	if next.IsZero() {
		return time.Hour
	}
	if d := time.Until(next); d > 0 {
		return d
	}
	return time.Millisecond
}

// sync reconciles once; true means the pod is finished with.
func (w *podWorker) sync(ctx context.Context) bool {
	pod, gone := w.snapshot()
	if gone || pod.DeletionTimestamp != nil {
		w.terminate(ctx, pod, gone)
		return true
	}
	w.pod = pod
	if w.startTime.IsZero() {
		w.startTime = time.Now()
	}
	w.retryAt = time.Time{}
	if err := w.prepare(ctx); err != nil {
		w.n.log.Info("pod not ready to start containers", "pod", klogRef(pod), "reason", err)
		w.retryAt = time.Now().Add(2 * time.Second)
	} else {
		w.blocked = nil
		w.reconcileContainers(ctx)
	}
	w.pushStatus(ctx)
	return false
}

// prepare creates the sandbox, volumes and hosts file; an error leaves the
// pod in ContainerCreating (or with the reason set in w.blocked).
func (w *podWorker) prepare(ctx context.Context) error {
	if w.pod.Spec.HostNetwork {
		w.blocked = &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError",
			Message: "hostNetwork pods are not supported by the local node"}
		return fmt.Errorf("%s", w.blocked.Message)
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("creating pod dir: %w", err)
	}
	if w.sandbox == nil {
		sb, err := w.n.network.AddPod(ctx)
		if err != nil {
			w.blocked = &corev1.ContainerStateWaiting{Reason: "ContainerCreating",
				Message: fmt.Sprintf("Failed to create pod sandbox: %v", err)}
			return err
		}
		w.sandbox = sb
	}
	if w.volPaths == nil || time.Since(w.volumesAt) >= w.n.opts.VolumeResyncPeriod {
		paths, err := w.volumes.render(ctx, w.pod, w.facts())
		if err != nil {
			if w.volPaths == nil {
				w.blocked = &corev1.ContainerStateWaiting{Reason: "ContainerCreating", Message: err.Error()}
				w.event(corev1.EventTypeWarning, "FailedMount", "%v", err)
				return err
			}
			w.n.log.Info("refreshing volumes", "pod", klogRef(w.pod), "error", err)
		} else {
			w.volPaths, w.volumesAt = paths, time.Now()
		}
	}
	if w.hosts == "" {
		p := filepath.Join(w.dir, "etc-hosts")
		extra := w.n.opts.ExtraHosts
		if len(w.n.opts.NodeAliases) > 0 {
			extra = append([]string{w.n.network.NodeIP().String() + "\t" + strings.Join(w.n.opts.NodeAliases, "\t")}, extra...)
		}
		if err := os.WriteFile(p, hostsFile(w.pod, w.sandbox.IP.String(), extra), 0o644); err != nil {
			return fmt.Errorf("writing /etc/hosts: %w", err)
		}
		r := filepath.Join(w.dir, "etc-resolv.conf")
		if err := os.WriteFile(r, []byte(resolvConf), 0o644); err != nil {
			return fmt.Errorf("writing /etc/resolv.conf: %w", err)
		}
		w.hosts, w.resolv = p, r
	}
	return nil
}

func (w *podWorker) facts() podFacts {
	f := podFacts{hostIP: w.n.network.NodeIP().String(), allocatable: w.n.allocatable()}
	if w.sandbox != nil {
		f.podIP = w.sandbox.IP.String()
	}
	return f
}
