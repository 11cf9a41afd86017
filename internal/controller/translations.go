package controller

import (
	"crypto/sha256"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/translate"
)

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
	r.translationsMu.Lock()
	last, found := r.translations[key]
	r.translationsMu.Unlock()
	if ok && found && last.fingerprint == fp {
		return last.t, last.routeStatuses
	}
	start := time.Now()
	t = translate.Gateway(in, key)
	if t != nil {
		metrics.TranslationSeconds.With(metrics.Gateway(key)).Observe(time.Since(start).Seconds())
		recordRefused(t) // once per translation: a reused one changes nothing
	}
	r.translationsMu.Lock()
	defer r.translationsMu.Unlock()
	if r.translations == nil {
		r.translations = map[types.NamespacedName]translated{}
	}
	if ok && t != nil {
		r.translations[key] = translated{fingerprint: fp, t: t}
	} else {
		delete(r.translations, key)
	}
	return t, false
}

// routeStatusesHanded records that the routes' statuses of t were handed to
// the route status writer.
func (r *GatewayReconciler) routeStatusesHanded(key types.NamespacedName, t *translate.Translation) {
	r.translationsMu.Lock()
	defer r.translationsMu.Unlock()
	if last, ok := r.translations[key]; ok && last.t == t {
		last.routeStatuses = true
		r.translations[key] = last
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
	r.translationsMu.Lock()
	defer r.translationsMu.Unlock()
	delete(r.translations, key)
}
