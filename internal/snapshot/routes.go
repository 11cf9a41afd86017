package snapshot

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/routekind"
)

// RouteIndexes are a route kind's indexes: by the Gateways and ListenerSets
// it names or has Gatewall status from, by the Services it uses, and by the
// filters it names (kinds with filters).
func RouteIndexes(k *routekind.Kind, controllerName string) []FieldIndex {
	parents := func(kind string) client.IndexerFunc {
		return func(o client.Object) []string {
			spec, st := k.Common(o)
			return routeParentKeys(kind, o.GetNamespace(), spec.ParentRefs, st.Parents, controllerName)
		}
	}
	indexes := []FieldIndex{
		{k.New(), IndexRouteGateway, parents("Gateway")},
		{k.New(), IndexRouteService, func(o client.Object) []string { return RouteServices(k, o) }},
		{k.New(), IndexRouteListenerSet, parents("ListenerSet")},
	}
	if k.ExtensionRefs != nil {
		indexes = append(indexes, FieldIndex{k.New(), IndexRouteFilter, func(o client.Object) []string {
			seen := map[string]bool{}
			for _, f := range RouteFilters(o) {
				seen[f.String()] = true
			}
			return keys(seen)
		}})
	}
	return indexes
}

// RouteServices are the Services a route's rules use ("namespace/name"), sorted.
func RouteServices(k *routekind.Kind, o client.Object) []string {
	seen := map[string]bool{}
	for _, ref := range k.Backends(o) {
		if s, ok := backendService(o.GetNamespace(), ref); ok {
			seen[s] = true
		}
	}
	return keys(seen)
}

// ListRoutes lists the routes of the kinds matching the options.
func ListRoutes(ctx context.Context, c client.Reader, kinds []*routekind.Kind, opts ...client.ListOption) ([]client.Object, error) {
	var routes []client.Object
	for _, k := range kinds {
		list := k.NewList()
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", k.Name, err)
		}
		routes = append(routes, k.Items(list)...)
	}
	return routes, nil
}
