package controller

import (
	"context"
	"crypto/sha256"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

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
	// reconciling are the Gateways being reconciled (GatewaysUsing).
	reconciling map[types.NamespacedName]int
}

// NewTranslations returns an empty cache.
func NewTranslations() *Translations {
	return &Translations{m: map[types.NamespacedName]translated{}, reconciling: map[types.NamespacedName]int{}}
}

type translated struct {
	// fingerprint is the input's, when it has one (fingerprinted);
	// withoutSlices its digest without the EndpointSlices.
	fingerprint, withoutSlices [sha256.Size]byte
	fingerprinted              bool
	// t is nil for a Gateway that is not Gatewall's.
	t *translate.Translation
	// routeStatuses says that the routes' statuses of t were handed to the
	// route status writer, which writes them (retrying until it does).
	routeStatuses bool
	// services are the Services whose EndpointSlices t read.
	services map[types.NamespacedName]bool
	// slices are the EndpointSlices of the input t was made from, with
	// the endpoints of t: refreshEndpoints reads again only those of the
	// Services whose slices changed.
	slices []*discoveryv1.EndpointSlice
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
// the input is the same, or that translation with the input's endpoints
// when only they changed (translate.RefreshEndpoints: a pod that starts or
// stops costs no graph, policies nor rendering); statusesHanded then says
// whether the routes' statuses of that translation were handed to the
// writer already (they are the same). What it translates is kept, a
// Gateway that is not Gatewall's too (nil).
func (r *GatewayReconciler) translate(in *graph.Input, key types.NamespacedName) (t *translate.Translation, statusesHanded bool) {
	c := r.Config.Translations
	fp, withoutSlices, ok := in.Fingerprints()
	last, found := c.lookup(key)
	if ok && found && last.fingerprinted {
		if last.fingerprint == fp {
			return last.t, last.routeStatuses
		}
		if last.withoutSlices == withoutSlices && !r.Config.TranslateEndpointChanges {
			if t, refreshed := translate.RefreshEndpoints(in, last.t); refreshed {
				metrics.EndpointRefreshes.With(metrics.Gateway(key)).Inc()
				c.keep(key, translated{fingerprint: fp, withoutSlices: withoutSlices, fingerprinted: true, t: t, routeStatuses: last.routeStatuses,
					services: last.services, slices: sliceObjects(in)})
				return t, last.routeStatuses
			}
		}
	}
	t = translateGateway(in, key)
	if t != nil {
		recordRefused(t) // once per translation the Gateway reconciler keeps
	}
	c.keep(key, translated{fingerprint: fp, withoutSlices: withoutSlices, fingerprinted: ok, t: t, slices: sliceObjects(in)})
	return t, false
}

// sliceObjects are an input's EndpointSlices.
func sliceObjects(in *graph.Input) []*discoveryv1.EndpointSlice {
	return slices.Collect(maps.Values(in.EndpointSlices))
}

// refreshEndpoints handles a Gateway queued by changes of the
// EndpointSlices of services alone since its last reconcile began (wakes):
// its last translation, with the endpoints of those Services' slices as
// the cache has them now and of the others as that translation read
// them, when that changes nothing but the endpoint sets
// (translate.RefreshEndpoints), is published and kept without reading a
// snapshot, provisioning or writing statuses (they are the last
// translation's). refreshed is false when the Gateway must be reconciled
// as usual: no kept translation, or a change that moves more than the
// endpoint sets.
func (r *GatewayReconciler) refreshEndpoints(ctx context.Context, key types.NamespacedName, services []types.NamespacedName) (refreshed bool, err error) {
	c := r.Config.Translations
	last, found := c.lookup(key)
	if !found || last.t == nil || last.t.Files == nil {
		return false, nil
	}
	changed := map[types.NamespacedName]bool{}
	for _, svc := range services {
		if last.services[svc] {
			changed[svc] = true
		}
	}
	if len(changed) == 0 {
		// Slices the last translation did not read (GatewaysUsing wakes a
		// Gateway being reconciled for every Service's): nothing to do.
		return true, nil
	}
	in, kept := graph.NewInput(r.Config.ControllerName), make([]*discoveryv1.EndpointSlice, 0, len(last.slices))
	for _, s := range last.slices {
		if !changed[types.NamespacedName{Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]}] {
			kept = append(kept, s)
		}
	}
	// The other Services' slices are read only by the first refresh after
	// a translation (RefreshServices keeps the endpoints a refresh read).
	if !last.t.Refreshed() {
		for _, s := range kept {
			in.Add(s)
		}
	}
	read := r.Config.reader(r.Client)
	for svc := range changed {
		listed, err := read.AddSlices(ctx, in, svc)
		if err != nil {
			return false, err
		}
		kept = append(kept, listed...)
	}
	t, ok := translate.RefreshServices(in, last.t, changed)
	if !ok {
		return false, nil
	}
	metrics.EndpointRefreshes.With(metrics.Gateway(key)).Inc()
	metrics.EndpointWakes.With(metrics.Gateway(key)).Inc()
	// The input's fingerprint is not known (no snapshot): the next
	// snapshot's differs from none, and is refreshed or translated.
	c.keep(key, translated{withoutSlices: last.withoutSlices, fingerprinted: last.fingerprinted, t: t, routeStatuses: last.routeStatuses,
		services: last.services, slices: kept})
	r.DataPlane.PublishEndpoints(key, t.Endpoints, t.Resolver, t.KeySources)
	log.FromContext(ctx).V(1).Info("endpoints published", "services", services)
	return true, nil
}

// lookup returns the Gateway's last translation.
func (c *Translations) lookup(key types.NamespacedName) (translated, bool) {
	if c == nil {
		return translated{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	last, found := c.m[key]
	return last, found
}

// keep keeps a Gateway's translation as its last.
func (c *Translations) keep(key types.NamespacedName, t translated) {
	if c == nil {
		return
	}
	if t.t != nil && t.services == nil {
		t.services = map[types.NamespacedName]bool{}
		for _, svc := range t.t.Graph.Services() {
			t.services[svc] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = t
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

// GatewaysUsing are the Gateways a change of a Service's EndpointSlices
// may change: those whose last translation read them, and those being
// reconciled, whose translation may read them for the first time from a
// snapshot taken before the change. A Gateway reconciled later reads the
// change itself: the cache holds it before its watch is told. Sorted.
func (c *Translations) GatewaysUsing(svc types.NamespacedName) []types.NamespacedName {
	c.mu.Lock()
	defer c.mu.Unlock()
	woken := map[types.NamespacedName]bool{}
	for key := range c.reconciling {
		woken[key] = true
	}
	for key, t := range c.m {
		if t.services[svc] {
			woken[key] = true
		}
	}
	return slices.SortedFunc(maps.Keys(woken), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
}

// reconciling marks a Gateway as being reconciled until the function it
// returns is called: from before its snapshot is read until after its
// translation is kept (GatewaysUsing).
func (c *Translations) reconcilingGateway(key types.NamespacedName) func() {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	c.reconciling[key]++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.reconciling[key]--; c.reconciling[key] <= 0 {
			delete(c.reconciling, key)
		}
	}
}
