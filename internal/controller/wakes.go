package controller

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Why a Gateway is reconciled: a Gateway queued by EndpointSlice events
// alone since its last reconcile began needs no snapshot (reading 5,000
// routes from the cache, fingerprinting them, was half the manager's CPU
// while pods came and went at 5,000 routes): its last translation's
// endpoints are refreshed from those Services' slices. Whatever else
// queues it (a watch, a data plane's report, a retry after an error, a
// requeue) reads everything. The Gateway controller's queue records it:
// every way into the queue but the slice watch's counts as "everything".

// wakes are, per Gateway, what queued it since its last reconcile began.
// Safe for concurrent use; nil records nothing (every reconcile reads
// everything).
type wakes struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*wake
}

type wake struct {
	// all: something besides EndpointSlices queued the Gateway.
	all bool
	// services are the Services whose EndpointSlices changed.
	services map[types.NamespacedName]bool
}

func newWakes() *wakes { return &wakes{m: map[types.NamespacedName]*wake{}} }

func (w *wakes) get(key types.NamespacedName) *wake {
	got, ok := w.m[key]
	if !ok {
		got = &wake{services: map[types.NamespacedName]bool{}}
		w.m[key] = got
	}
	return got
}

// everything records that a Gateway is queued for anything but slices.
func (w *wakes) everything(key types.NamespacedName) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.get(key).all = true
}

// slicesOf records that a Gateway is queued because the EndpointSlices of
// a Service changed.
func (w *wakes) slicesOf(key, svc types.NamespacedName) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.get(key).services[svc] = true
}

// take forgets what queued a Gateway, whose reconcile begins, and returns
// the Services whose slices changed, sorted, with true when nothing else
// queued it. A Gateway with nothing recorded (queued before the records
// began, or by a queue that keeps none) reads everything.
func (w *wakes) take(key types.NamespacedName) ([]types.NamespacedName, bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	got, ok := w.m[key]
	delete(w.m, key)
	if !ok || got.all || len(got.services) == 0 {
		return nil, false
	}
	return slices.SortedFunc(maps.Keys(got.services), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) }), true
}

// queue makes the Gateway controller's queue: controller-runtime's
// priority queue (its default), recording every item added as queued for
// everything, but those the slice watch adds (addSlices).
func (w *wakes) queue(log logr.Logger) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if w == nil {
		return nil // controller-runtime's own
	}
	return func(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return &wakeQueue{wakes: w, PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.Log = log.WithValues("controller", name)
			o.RateLimiter = limiter
		})}
	}
}

// wakeQueue is a priority queue that records why its items are queued.
type wakeQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	wakes *wakes
}

func (q *wakeQueue) Add(item reconcile.Request) {
	q.wakes.everything(item.NamespacedName)
	q.PriorityQueue.Add(item)
}

func (q *wakeQueue) AddAfter(item reconcile.Request, d time.Duration) {
	q.wakes.everything(item.NamespacedName)
	q.PriorityQueue.AddAfter(item, d)
}

func (q *wakeQueue) AddRateLimited(item reconcile.Request) {
	q.wakes.everything(item.NamespacedName)
	q.PriorityQueue.AddRateLimited(item)
}

func (q *wakeQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	for _, item := range items {
		q.wakes.everything(item.NamespacedName)
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

// addSlices queues a Gateway because the EndpointSlices of a Service
// changed.
func (q *wakeQueue) addSlices(item reconcile.Request, svc types.NamespacedName) {
	q.wakes.slicesOf(item.NamespacedName, svc)
	q.PriorityQueue.Add(item)
}

// sliceHandler queues the Gateways a change of EndpointSlices may change
// (gatewaysOfSlice), recording the slices' Service.
type sliceHandler struct{ r *GatewayReconciler }

func (h sliceHandler) Create(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.queue(ctx, q, e.Object)
}

func (h sliceHandler) Update(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.queue(ctx, q, e.ObjectOld, e.ObjectNew)
}

func (h sliceHandler) Delete(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.queue(ctx, q, e.Object)
}

func (h sliceHandler) Generic(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.queue(ctx, q, e.Object)
}

func (h sliceHandler) queue(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
	wq, records := q.(*wakeQueue)
	for _, o := range objs {
		if o == nil {
			continue
		}
		svc := types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetLabels()[discoveryv1.LabelServiceName]}
		for _, req := range h.r.gatewaysOfSlice(ctx, o) {
			if records {
				wq.addSlices(req, svc)
			} else {
				q.Add(req)
			}
		}
	}
}
