package controller

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/routekind"
)

// What the manager does for every route kind of routekind.Kinds: index,
// watch, list and write statuses. A kind whose CRD is optional has an
// API of its name, served once its CRD is installed.

// routeAPI is the optional API of a route kind; "" when its CRD is required.
func routeAPI(k *routekind.Kind) API {
	if k.Optional {
		return API(k.Name)
	}
	return ""
}

// routeKinds are the route kinds whose CRD is served now (a kind's indexes
// exist only then: listing it before fails).
func (c Config) routeKinds() []*routekind.Kind {
	return slices.DeleteFunc(slices.Clone(routekind.Kinds), func(k *routekind.Kind) bool {
		return k.Optional && !c.served(routeAPI(k))
	})
}

// routeIndexes are a route kind's indexes: by the Gateways and ListenerSets
// it names or has Gatewall status from, and by the Services it uses.
func routeIndexes(k *routekind.Kind, controllerName string) []fieldIndex {
	parents := func(kind string) client.IndexerFunc {
		return func(o client.Object) []string {
			spec, st := k.Common(o)
			return routeParentKeys(kind, o.GetNamespace(), spec.ParentRefs, st.Parents, controllerName)
		}
	}
	return []fieldIndex{
		{k.New(), indexRouteGateway, parents("Gateway")},
		{k.New(), indexRouteService, func(o client.Object) []string { return routeServices(k, o) }},
		{k.New(), indexRouteListenerSet, parents("ListenerSet")},
	}
}

// routeServices are the Services a route's rules use ("namespace/name"), sorted.
func routeServices(k *routekind.Kind, o client.Object) []string {
	seen := map[string]bool{}
	for _, ref := range k.Backends(o) {
		if s, ok := backendService(o.GetNamespace(), ref); ok {
			seen[s] = true
		}
	}
	return keys(seen)
}

// listRoutes lists the routes of the kinds matching the options.
func listRoutes(ctx context.Context, c client.Reader, kinds []*routekind.Kind, opts ...client.ListOption) ([]client.Object, error) {
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
