package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/snapshot"
	"github.com/gatewall/gatewall/internal/statuswrite"
)

// eachRouteBut calls fn with every route the index queries find but those
// in keep, until fn fails. The routes are the cache's own objects (only
// their names are read, and a route is copied before it is changed).
func eachRouteBut(ctx context.Context, c client.Reader, kinds []*routekind.Kind, keep map[graph.ObjectRef]bool, queries []client.MatchingFields, fn func(client.Object) error) error {
	for _, q := range queries {
		routes, err := snapshot.ListRoutes(ctx, c, kinds, q, client.UnsafeDisableDeepCopyOption(true))
		if err != nil {
			return err
		}
		for _, route := range routes {
			if keep[statuswrite.RouteRef(route)] {
				continue
			}
			if err := fn(route); err != nil {
				return err
			}
		}
	}
	return nil
}
