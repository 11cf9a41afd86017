package node

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// startEvents records pod events as a kubelet does (source "kubelet" on
// this node), so that `kubectl describe pod` explains a pod's state.
func (n *Node) startEvents(ctx context.Context) {
	n.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
	n.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: n.client.CoreV1().Events("")})
	n.recorder = n.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: n.opts.Name})
}

// event records an event about the worker's pod.
func (w *podWorker) event(eventType, reason, format string, args ...any) {
	if w.pod != nil && w.n.recorder != nil {
		w.n.recorder.Eventf(w.pod, eventType, reason, format, args...)
	}
}
