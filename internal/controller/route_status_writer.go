package controller

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeStatusWorkers write route statuses in parallel; the client's rate
// limit (--kube-api-qps) bounds them together with everything else.
const routeStatusWorkers = 4

// RouteStatusWriter writes the Gateway reconciler's route parent statuses
// in the background, so that a reconcile publishes a Gateway's
// configuration and returns without waiting for thousands of status writes
// (at 5,000 routes one pass takes the client's rate limit 100 s: the next
// change's configuration would wait behind it). Writes are kept per route
// and Gateway, the newest replacing one not written yet, and written by a
// few workers; one that fails is retried with backoff unless a newer one
// replaced it. It runs on the leader only, like the reconcilers that feed it.
type RouteStatusWriter struct {
	client    client.Client
	log       logr.Logger
	tlsRoutes bool
	queue     workqueue.TypedRateLimitingInterface[routeStatusKey]

	mu      sync.Mutex
	pending map[routeStatusKey]routeStatusWrite
}

type routeStatusKey struct {
	route   routeID
	gateway types.NamespacedName
}

type routeStatusWrite struct {
	route client.Object
	owner parentOwner
	ours  []gatewayv1.RouteParentStatus
}

// NewRouteStatusWriter makes a writer; the manager runs it (mgr.Add).
// tlsRoutes says whether the TLSRoute CRD is installed (Config.TLSRoutes).
func NewRouteStatusWriter(c client.Client, log logr.Logger, tlsRoutes bool) *RouteStatusWriter {
	return &RouteStatusWriter{
		client: c, log: log, tlsRoutes: tlsRoutes, pending: map[routeStatusKey]routeStatusWrite{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[routeStatusKey](),
			workqueue.TypedRateLimitingQueueConfig[routeStatusKey]{Name: "route-status"}),
	}
}

// set records that the parent statuses owner owns in route should be ours
// (none clears them).
func (w *RouteStatusWriter) set(route client.Object, owner parentOwner, ours []gatewayv1.RouteParentStatus) {
	k := routeStatusKey{route: idOf(route), gateway: owner.gateway}
	w.mu.Lock()
	w.pending[k] = routeStatusWrite{route: route, owner: owner, ours: ours}
	w.mu.Unlock()
	w.queue.Add(k)
}

// clear clears owner's parent statuses from every route that may hold one,
// except those in keep.
func (w *RouteStatusWriter) clear(ctx context.Context, owner parentOwner, keep map[routeID]bool) error {
	return eachRouteBut(ctx, w.client, w.tlsRoutes, keep, routeQueries(owner), func(route client.Object) error {
		w.set(route, owner, nil)
		return nil
	})
}

// Start runs the workers until ctx ends.
func (w *RouteStatusWriter) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range routeStatusWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.next(ctx) {
			}
		}()
	}
	<-ctx.Done()
	w.queue.ShutDown()
	wg.Wait()
	return nil
}

// NeedLeaderElection: only the leader reconciles, and writes statuses.
func (w *RouteStatusWriter) NeedLeaderElection() bool { return true }

// next writes one route's pending statuses; false when the queue is shut
// down. The queue never hands one key to two workers at once.
func (w *RouteStatusWriter) next(ctx context.Context) bool {
	k, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(k)
	w.mu.Lock()
	wr, ok := w.pending[k]
	delete(w.pending, k)
	w.mu.Unlock()
	if !ok {
		return true
	}
	if err := writeRouteParents(ctx, w.client, wr.route, wr.owner, wr.ours); err != nil {
		w.log.Error(err, "Writing a route's status; retrying", "route", k.route.key, "gateway", k.gateway)
		w.mu.Lock()
		if _, newer := w.pending[k]; !newer {
			w.pending[k] = wr
		}
		w.mu.Unlock()
		w.queue.AddRateLimited(k)
		return true
	}
	w.queue.Forget(k)
	return true
}
