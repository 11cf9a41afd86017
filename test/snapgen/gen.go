package snapgen

import (
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gen is one generation in progress.
type gen struct {
	src  Source
	size Size
	snap *Snapshot
	// What later objects refer to.
	gateways []*gatewayRef
	routes   []routeRef
	// listenerSets may be a route's parent.
	listenerSets []routeRef
	services     map[string][]serviceRef // by namespace
	// nginxProxies get NGINX Gateway Fabric's NGINX-facing fields last.
	nginxProxies []*v1alpha2.NginxProxy
}

type gatewayRef struct {
	namespace, name string
	listeners       []listenerRef
	// object is the Gateway, which a ListenerSet generated later may
	// need to be allowed by.
	object *gatewayv1.Gateway
}

type listenerRef struct {
	name string
	port int32
}

type routeRef struct {
	kind, namespace, name string
}

type serviceRef struct {
	name  string
	ports []servicePort
}

type servicePort struct {
	name        string
	port        int32
	appProtocol string
}

// intn is a choice in [0, n).
func (g *gen) intn(n int) int { return g.src.Intn(n) }

// one is true once in k choices; the simplest choice (0) is false.
func (g *gen) one(k int) bool { return g.src.Intn(k) == k-1 }

// bad is true for the rare value Gatewall must refuse: rare enough that
// most rules, made of a dozen values, stay valid.
func (g *gen) bad() bool { return g.one(64) }

// edge is true for the rare value at the edge of what the API allows (the
// longest names and values): common enough to be tried everywhere, rare
// enough that most configurations hold none.
func (g *gen) edge() bool { return g.one(16) }

// upTo is a count in [0, max].
func (g *gen) upTo(max int) int { return g.src.Intn(max + 1) }

// oneOf picks one of options; the first is the simplest.
func oneOf[T any](g *gen, options ...T) T { return options[g.src.Intn(len(options))] }

// repeat is s repeated to length n.
func repeat(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }
