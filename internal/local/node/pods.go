package node

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// startPods watches the pods bound to this node and hands each to its worker.
func (n *Node) startPods(ctx context.Context) error {
	factory := informers.NewSharedInformerFactoryWithOptions(n.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", n.opts.Name).String()
		}))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.dispatch(ctx, obj, false) },
		UpdateFunc: func(_, obj any) { n.dispatch(ctx, obj, false) },
		DeleteFunc: func(obj any) { n.dispatch(ctx, obj, true) },
	}); err != nil {
		return fmt.Errorf("node: watching pods: %w", err)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("node: syncing %v informer", typ)
		}
	}
	n.podInformers = factory
	return nil
}

func (n *Node) dispatch(ctx context.Context, obj any, gone bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopping {
		return
	}
	w, ok := n.workers[pod.UID]
	if !ok {
		if gone {
			return
		}
		// Pods that finished before this node started are history, unless
		// they still need deleting.
		terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		if terminal && pod.DeletionTimestamp == nil {
			return
		}
		w = newPodWorker(n, pod)
		n.workers[pod.UID] = w
		n.workerWG.Add(1)
		go func() {
			defer n.workerWG.Done()
			w.run(ctx)
			n.mu.Lock()
			delete(n.workers, w.uid)
			n.mu.Unlock()
		}()
		return
	}
	w.update(pod, gone)
}

// workerByName finds the worker of the newest pod with this name.
func (n *Node) workerByName(ns, name string) *podWorker {
	n.mu.Lock()
	defer n.mu.Unlock()
	var found []*podWorker
	for _, w := range n.workers {
		if p, _ := w.snapshot(); p != nil && p.Namespace == ns && p.Name == name {
			found = append(found, w)
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Slice(found, func(i, j int) bool {
		a, _ := found[i].snapshot()
		b, _ := found[j].snapshot()
		return a.CreationTimestamp.After(b.CreationTimestamp.Time)
	})
	return found[0]
}
