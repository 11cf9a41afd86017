package node

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// buildStatus computes the pod's status from the worker's state, on top of
// base (the status in the API, whose other conditions are kept).
func (w *podWorker) buildStatus(base corev1.PodStatus) corev1.PodStatus {
	st := *base.DeepCopy()
	nodeIP := w.n.network.NodeIP().String()
	st.HostIP, st.HostIPs = nodeIP, []corev1.HostIP{{IP: nodeIP}}
	if w.sandbox != nil {
		ip := w.sandbox.IP.String()
		st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	// Times are stored with second precision; rounding here keeps the
	// comparison with the last written status stable.
	start := metav1.NewTime(w.startTime).Rfc3339Copy()
	st.StartTime = &start
	st.InitContainerStatuses, st.ContainerStatuses = nil, nil
	allReady, allFinished, allSucceeded, anyStarted := true, true, true, false
	for _, c := range w.containers {
		cs := w.containerStatus(c)
		if c.init {
			st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
			continue
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
		allReady = allReady && cs.Ready
		anyStarted = anyStarted || cs.State.Running != nil || c.lastExit != nil
		allFinished = allFinished && c.finished
		allSucceeded = allSucceeded && c.finished && c.lastExit.ExitCode == 0
	}
	initFailed := false
	for _, c := range w.containers {
		if c.init && c.finished && c.lastExit.ExitCode != 0 {
			initFailed = true
		}
	}
	switch {
	case initFailed:
		st.Phase = corev1.PodFailed
	case !w.initDone || !anyStarted:
		st.Phase = corev1.PodPending
	case allFinished && allSucceeded:
		st.Phase = corev1.PodSucceeded
	case allFinished:
		st.Phase = corev1.PodFailed
	default:
		st.Phase = corev1.PodRunning
	}
	gatesReady := true
	for _, g := range w.pod.Spec.ReadinessGates {
		if !conditionTrue(base.Conditions, g.ConditionType) {
			gatesReady = false
		}
	}
	containersReady := allReady && st.Phase == corev1.PodRunning
	setCondition(&st, corev1.PodReadyToStartContainers, w.sandbox != nil)
	setCondition(&st, corev1.PodInitialized, w.initDone)
	setCondition(&st, corev1.ContainersReady, containersReady)
	setCondition(&st, corev1.PodReady, containersReady && gatesReady)
	return st
}

func (w *podWorker) containerStatus(c *container) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{
		Name:         c.spec.Name,
		Image:        c.spec.Image,
		ImageID:      "local://" + Repository(c.spec.Image),
		RestartCount: c.restartCount,
	}
	switch {
	case c.running():
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.proc.started).Rfc3339Copy()}
		cs.ContainerID = "local://" + c.id
		cs.Ready = c.ready
		cs.Started = ptrTo(c.started)
	case c.finished:
		cs.State.Terminated = c.lastExit.DeepCopy()
		cs.ContainerID = c.lastExit.ContainerID
		cs.Ready = c.init && c.lastExit.ExitCode == 0
		cs.Started = ptrTo(false)
	default:
		waiting := c.waiting
		if waiting == nil {
			waiting = w.blocked
		}
		if waiting == nil {
			waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		if c.init && !w.initDone && w.blocked == nil && c.waiting == nil {
			waiting = &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
		}
		cs.State.Waiting = waiting.DeepCopy()
		cs.Started = ptrTo(false)
	}
	if c.lastExit != nil && !c.finished {
		cs.LastTerminationState.Terminated = c.lastExit.DeepCopy()
	}
	return cs
}

func conditionTrue(conds []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// setCondition sets a condition, keeping its transition time when its
// status does not change.
func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, ok bool) {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			if st.Conditions[i].Status != status {
				st.Conditions[i].Status = status
				st.Conditions[i].LastTransitionTime = metav1.Now().Rfc3339Copy()
			}
			return
		}
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: metav1.Now().Rfc3339Copy()})
}

// pushStatus writes the status when it changed since the last write,
// retrying on conflicts with a fresh object.
func (w *podWorker) pushStatus(ctx context.Context) {
	pod := w.pod
	for attempt := 0; attempt < 3; attempt++ {
		st := w.buildStatus(pod.Status)
		if w.lastPushed != nil && apiequality.Semantic.DeepEqual(*w.lastPushed, st) {
			return
		}
		update := pod.DeepCopy()
		update.Status = st
		_, err := w.n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{})
		switch {
		case err == nil:
			w.lastPushed = &st
			return
		case apierrors.IsNotFound(err):
			return // the deletion reaches the worker through the informer
		case apierrors.IsConflict(err):
			fresh, gerr := w.n.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if gerr != nil || fresh.UID != w.uid {
				return
			}
			pod = fresh
		default:
			if ctx.Err() == nil {
				w.n.log.Error(err, "updating pod status", "pod", klogRef(pod))
				w.retryAt = time.Now().Add(time.Second)
			}
			return
		}
	}
}
