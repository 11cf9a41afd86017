package controller

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
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
	*jobs[routeStatusKey]
	client    client.Client
	tlsRoutes bool
}

type routeStatusKey struct {
	route   routeID
	gateway types.NamespacedName
}

// NewRouteStatusWriter makes a writer; the manager runs it (mgr.Add).
// tlsRoutes says whether the TLSRoute CRD is installed (Config.TLSRoutes).
func NewRouteStatusWriter(c client.Client, log logr.Logger, tlsRoutes bool) *RouteStatusWriter {
	return &RouteStatusWriter{jobs: newJobs[routeStatusKey]("route-status", log, routeStatusWorkers), client: c, tlsRoutes: tlsRoutes}
}

// set records that the parent statuses owner owns in route should be ours
// (none clears them).
func (w *RouteStatusWriter) set(route client.Object, owner parentOwner, ours []gatewayv1.RouteParentStatus) {
	w.hand(routeStatusKey{route: idOf(route), gateway: owner.gateway}, func(ctx context.Context) error {
		if err := writeRouteParents(ctx, w.client, route, owner, ours); err != nil {
			return fmt.Errorf("writing the status of route %s (%T) for Gateway %s: %w", client.ObjectKeyFromObject(route), route, owner.gateway, err)
		}
		return nil
	})
}

// clear clears owner's parent statuses from every route that may hold one,
// except those in keep.
func (w *RouteStatusWriter) clear(ctx context.Context, owner parentOwner, keep map[routeID]bool) error {
	return eachRouteBut(ctx, w.client, w.tlsRoutes, keep, routeQueries(owner), func(route client.Object) error {
		w.set(route, owner, nil)
		return nil
	})
}
