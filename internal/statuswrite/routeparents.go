package statuswrite

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/status"
)

// ParentOwner says which of a route's parent statuses one reconcile owns:
// those Gatewall wrote for a Gateway and for ListenerSets. The Gateway
// reconciler owns its Gateway's and its ListenerSets'; the ListenerSet
// reconciler takes over a set's when no Gateway of Gatewall's has it.
type ParentOwner struct {
	ControllerName string
	Gateway        types.NamespacedName
	Sets           map[types.NamespacedName]bool
}

// key identifies the owner among a route's pending writes: its Gateway,
// or, for an owner of ListenerSets alone (sets no Gateway of Gatewall's
// has any more, whose parent statuses are cleared), those sets.
func (o ParentOwner) key() string {
	if o.Gateway != (types.NamespacedName{}) {
		return "Gateway " + o.Gateway.String()
	}
	sets := make([]string, 0, len(o.Sets))
	for k := range o.Sets {
		sets = append(sets, k.String())
	}
	slices.Sort(sets)
	return "ListenerSets " + strings.Join(sets, ",")
}

// Owns says whether a parent status written by controller names a parent
// the owner writes for; ns is the route's namespace.
func (o ParentOwner) Owns(p gatewayv1.RouteParentStatus, ns string) bool {
	if string(p.ControllerName) != o.ControllerName {
		return false
	}
	switch parent := graph.ParentOf(p.ParentRef, ns); {
	case parent.Is(graph.KindListenerSet):
		return o.Sets[parent.Key]
	case parent.Is("Gateway"):
		return parent.Key == o.Gateway
	}
	return false
}

// ParentWrite is the parent statuses one owner owns in a route: ours.
type ParentWrite struct {
	Owner ParentOwner
	Ours  []gatewayv1.RouteParentStatus
}

// WriteRouteParents replaces, in a route's status, the parent statuses each
// write's owner owns with its ours, in one update; other parents' and other
// controllers' entries are kept, and the entries are put in
// status.OrderRouteParents' order.
func WriteRouteParents(ctx context.Context, c client.Client, route client.Object, writes ...ParentWrite) error {
	key := client.ObjectKeyFromObject(route)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// An empty object of the route's kind: Get fills it from the
		// cache, and route (the cache's own, shared) stays as it is.
		fresh := reflect.New(reflect.TypeOf(route).Elem()).Interface().(client.Object)
		if err := c.Get(ctx, key, fresh); err != nil {
			return client.IgnoreNotFound(err)
		}
		old := routekind.Parents(fresh)
		var want []gatewayv1.RouteParentStatus
		for _, p := range old {
			if !slices.ContainsFunc(writes, func(w ParentWrite) bool { return w.Owner.Owns(p, key.Namespace) }) {
				want = append(want, p)
			}
		}
		for _, w := range writes {
			for _, p := range w.Ours {
				// A copy: the update decodes the API server's answer into
				// fresh, and ours stays as the writer handed it.
				want = append(want, *p.DeepCopy())
			}
		}
		if len(writes) > 0 {
			want = status.OrderRouteParents(fresh, key.Namespace, want, writes[0].Owner.ControllerName)
		}
		if equality.Semantic.DeepEqual(old, want) || len(old) == 0 && len(want) == 0 {
			return nil
		}
		if want == nil {
			want = []gatewayv1.RouteParentStatus{}
		}
		routekind.SetParents(fresh, want)
		if err := update(ctx, c, fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // deleted since the cache was read: nothing to write
			}
			return fmt.Errorf("updating status of %T %s: %w", route, key, err)
		}
		return nil
	})
}

// RouteRef tells routes apart across kinds.
func RouteRef(route client.Object) graph.ObjectRef {
	return graph.ObjectRef{Kind: routekind.Of(route).Name, Key: client.ObjectKeyFromObject(route)}
}
