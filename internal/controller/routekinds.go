package controller

import (
	"slices"

	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/routekind"
)

// What the manager does for every route kind of routekind.Kinds: index,
// watch, list and write statuses. A kind whose CRD is optional has an
// API of its name, served once its CRD is installed.

// routeKinds are the route kinds whose CRD is served now (a kind's indexes
// exist only then: listing it before fails).
func (c Config) routeKinds() []*routekind.Kind {
	return slices.DeleteFunc(slices.Clone(routekind.Kinds), func(k *routekind.Kind) bool {
		return k.Optional && !c.served(apis.RouteAPI(k))
	})
}
