package controller

import (
	"crypto/sha256"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/translate"
)

// Translations keep each Gateway's last translation, made by the Gateway
// reconciler, which reuses it while the Gateway's input is the same (its
// fingerprint) and reads, for that translation, whether its routes'
// statuses were handed to the writer already. Safe for concurrent use;
// nil keeps nothing.
type Translations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]translated
}

// NewTranslations returns an empty cache.
func NewTranslations() *Translations {
	return &Translations{m: map[types.NamespacedName]translated{}}
}

type translated struct {
	// fingerprint is the input's, when it has one (fingerprinted).
	fingerprint   [sha256.Size]byte
	fingerprinted bool
	// t is nil for a Gateway that is not Gatewall's.
	t *translate.Translation
	// routeStatuses says that the routes' statuses of t were handed to the
	// route status writer, which writes them (retrying until it does).
	routeStatuses bool
}

// translateGateway translates a Gateway, timing it.
func translateGateway(in *graph.Input, key types.NamespacedName) *translate.Translation {
	start := time.Now()
	t := translate.Gateway(in, key)
	if t != nil {
		metrics.TranslationSeconds.With(metrics.Gateway(key)).Observe(time.Since(start).Seconds())
	}
	return t
}

// translate translates the Gateway, or returns its last translation when
// the input is the same; statusesHanded then says whether the routes'
// statuses of that translation were handed to the writer already. What it
// translates is kept, a Gateway that is not Gatewall's too (nil).
func (r *GatewayReconciler) translate(in *graph.Input, key types.NamespacedName) (t *translate.Translation, statusesHanded bool) {
	c := r.Config.Translations
	fp, ok := in.Fingerprint()
	if last, hit := c.lookup(key, fp); ok && hit {
		return last.t, last.routeStatuses
	}
	t = translateGateway(in, key)
	if t != nil {
		recordRefused(t) // once per translation the Gateway reconciler keeps
	}
	if c == nil {
		return t, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := translated{fingerprint: fp, fingerprinted: ok, t: t}
	c.m[key] = kept
	return t, false
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
	return last, found && last.fingerprinted && last.fingerprint == fp
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
func newest(in *graph.Input, route *graph.Route) client.Object {
	if o := in.Route(route.Kind, route.Key); o != nil {
		return o
	}
	return route.Source
}

// forgetTranslation drops a Gateway's last translation: the Gateway is gone.
func (r *GatewayReconciler) forgetTranslation(key types.NamespacedName) {
	c := r.Config.Translations
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}
