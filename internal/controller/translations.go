package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/translate"
)

// Translations keep each Gateway's last translation and the fingerprint of
// its input, for the Gateway reconciler, which writes them, and the policy
// reconcilers, which reuse one whose input is the same as theirs instead of
// translating the Gateway again. A change wakes every policy reconciler at
// once, often before the Gateway reconciler has translated it: the first
// reader to need a translation of that input makes it, the others wait for
// it, and it is kept apart (read) until the Gateway reconciler takes it or
// keeps another. Safe for concurrent use; nil keeps nothing.
type Translations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]translated
	// read is the last translation readers made of each Gateway.
	read map[types.NamespacedName]translated
	// making are the translations readers are making, by Gateway and input.
	making singleflight.Group
}

// NewTranslations returns an empty cache.
func NewTranslations() *Translations {
	return &Translations{m: map[types.NamespacedName]translated{}, read: map[types.NamespacedName]translated{}}
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
// reconciler): the Gateway reconciler's or another reader's when the input
// is the same, else a new one, which the other readers reuse.
func (c *Translations) Cached(in *graph.Input, key types.NamespacedName) *translate.Translation {
	fp, ok := in.Fingerprint()
	if !ok || c == nil {
		return translateGateway(in, key)
	}
	if t, hit := c.reusable(key, fp); hit {
		return t
	}
	// Readers of the same input wait for the first one's translation.
	t, _, _ := c.making.Do(key.String()+"\x00"+hex.EncodeToString(fp[:]), func() (any, error) {
		if t, hit := c.reusable(key, fp); hit {
			return t, nil // made while this reader looked
		}
		t := translateGateway(in, key)
		if t != nil {
			c.mu.Lock()
			c.read[key] = translated{fingerprint: fp, t: t}
			c.mu.Unlock()
		}
		return t, nil
	})
	return t.(*translate.Translation)
}

// reusable returns the Gateway reconciler's or the readers' translation of
// the input, if there is one.
func (c *Translations) reusable(key types.NamespacedName, fp [sha256.Size]byte) (*translate.Translation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, last := range []translated{c.m[key], c.read[key]} {
		if last.t != nil && last.fingerprint == fp {
			return last.t, true
		}
	}
	return nil, false
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
	c := r.Config.Translations
	fp, ok := in.Fingerprint()
	if last, hit := c.lookup(key, fp); ok && hit {
		return last.t, last.routeStatuses
	}
	if read, hit := c.taken(key, fp); ok && hit {
		t = read
	} else {
		t = translateGateway(in, key)
	}
	if t != nil {
		recordRefused(t) // once per translation the Gateway reconciler keeps
	}
	// The policies of the Gateway learn of it once it is kept (deferred
	// calls run last in, first out: after the unlock below).
	if n := r.Config.Translated; n != nil {
		defer n.NotifyGateway(key)
	}
	if c == nil {
		return t, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// What readers made is taken, or of another input (older or newer:
	// nothing tells); one translation per Gateway is kept, not two.
	delete(c.read, key)
	if ok && t != nil {
		c.m[key] = translated{fingerprint: fp, t: t}
	} else {
		delete(c.m, key)
	}
	return t, false
}

// taken returns the translation readers made of the input, if they did.
func (c *Translations) taken(key types.NamespacedName, fp [sha256.Size]byte) (*translate.Translation, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last, found := c.read[key]
	return last.t, found && last.fingerprint == fp
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

// forgetTranslation drops a Gateway's last translations.
func (r *GatewayReconciler) forgetTranslation(key types.NamespacedName) {
	if n := r.Config.Translated; n != nil {
		defer n.NotifyGateway(key)
	}
	c := r.Config.Translations
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
	delete(c.read, key)
}
