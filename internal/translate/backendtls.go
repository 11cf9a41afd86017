package translate

import (
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// BackendTLSAncestors are the translated Gateways that proxy to a Service
// the policy targets: a backend or a mirror of an HTTPRoute or GRPCRoute rule.
// TLSRoutes pass bytes on, with no TLS of NGINX's own to the backend, so a
// Service used only by TLSRoutes makes no ancestor. The manager and the
// render command both use it.
func BackendTLSAncestors(p *gatewayv1.BackendTLSPolicy, translations []*Translation) []types.NamespacedName {
	targets := map[types.NamespacedName]bool{}
	for _, t := range p.Spec.TargetRefs {
		if t.Group == "" && t.Kind == "Service" {
			targets[types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)}] = true
		}
	}
	var out []types.NamespacedName
	for _, t := range translations {
		if usesAny(t.Graph, targets) {
			out = append(out, t.Graph.Key)
		}
	}
	return out
}

func usesAny(g *graph.Gateway, services map[types.NamespacedName]bool) bool {
	for _, r := range g.Routes {
		if r.Kind == graph.KindTLSRoute {
			continue
		}
		for _, rule := range r.Rules {
			for _, b := range rule.Backends {
				if services[b.Service] {
					return true
				}
			}
			for _, m := range rule.Filters.Mirrors {
				if services[m.Backend.Service] {
					return true
				}
			}
		}
	}
	return false
}
