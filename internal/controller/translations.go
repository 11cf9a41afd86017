package controller

import (
	"crypto/sha256"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/translate"
)

// Translations keep each Gateway's last translation and the fingerprint of
// its input, for the Gateway reconciler, which writes them, and the policy
// reconcilers, which reuse one whose input is the same as theirs instead of
// translating the Gateway again. Safe for concurrent use; nil keeps nothing.
type Translations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]translated
}

// NewTranslations returns an empty cache.
func NewTranslations() *Translations {
	return &Translations{m: map[types.NamespacedName]translated{}}
}

// lookup returns the Gateway's last translation if its input had the
// fingerprint fp.
func (c *Translations) lookup(key types.NamespacedName, fp [sha256.Size]byte) (translated, bool) {
	if c == nil {
		return translated{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last, found := c.m[key]
	return last, found && last.fingerprint == fp
}

// Cached translates a Gateway for a reader of its translation (a policy
// reconciler): the last translation when the input is the same, else a new
// one, which is not kept (the Gateway reconciler keeps its own).
func (c *Translations) Cached(in *graph.Input, key types.NamespacedName) *translate.Translation {
	if fp, ok := in.Fingerprint(); ok {
		if last, hit := c.lookup(key, fp); hit {
			return last.t
		}
	}
	return translate.Gateway(in, key)
}

type translated struct {
	fingerprint [sha256.Size]byte
	t           *translate.Translation
	// routeStatuses says that the routes' statuses of t were handed to the
	// route status writer, which writes them (retrying until it does).
	routeStatuses bool
}

// translate translates the Gateway, or returns its last translation when
// the input is the same; statusesHanded then says whether the routes'
// statuses of that translation were handed to the writer already.
func (r *GatewayReconciler) translate(in *graph.Input, key types.NamespacedName) (t *translate.Translation, statusesHanded bool) {
	fp, ok := in.Fingerprint()
	if last, hit := r.Config.Translations.lookup(key, fp); ok && hit {
		return last.t, last.routeStatuses
	}
	start := time.Now()
	t = translate.Gateway(in, key)
	if t != nil {
		metrics.TranslationSeconds.With(metrics.Gateway(key)).Observe(time.Since(start).Seconds())
		recordRefused(t) // once per translation: a reused one changes nothing
	}
	c := r.Config.Translations
	if c == nil {
		return t, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok && t != nil {
		c.m[key] = translated{fingerprint: fp, t: t}
	} else {
		delete(c.m, key)
	}
	return t, false
}

// routeStatusesHanded records that the routes' statuses of t were handed to
// the route status writer.
func (r *GatewayReconciler) routeStatusesHanded(key types.NamespacedName, t *translate.Translation) {
	c := r.Config.Translations
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, ok := c.m[key]; ok && last.t == t {
		last.routeStatuses = true
		c.m[key] = last
	}
}

// newest is the snapshot's copy of a route, whose status is the newest
// seen (a reused translation holds older copies), or route if it has none.
func newest(in *graph.Input, route client.Object) client.Object {
	k := client.ObjectKeyFromObject(route)
	switch route.(type) {
	case *gatewayv1.HTTPRoute:
		if o := in.HTTPRoutes[k]; o != nil {
			return o
		}
	case *gatewayv1.GRPCRoute:
		if o := in.GRPCRoutes[k]; o != nil {
			return o
		}
	case *gatewayv1.TLSRoute:
		if o := in.TLSRoutes[k]; o != nil {
			return o
		}
	}
	return route
}

// forgetTranslation drops a Gateway's last translation.
func (r *GatewayReconciler) forgetTranslation(key types.NamespacedName) {
	c := r.Config.Translations
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}
