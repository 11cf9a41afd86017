package translate

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// graphParentRef is the part of a parentRef that says which Gateway, or
// ListenerSet of a Gateway, it names.
type graphParentRef struct {
	isGateway     bool
	isListenerSet bool
	ns            *string
	name          string
}

func (r graphParentRef) namespace(routeNamespace string) string {
	if r.ns != nil {
		return *r.ns
	}
	return routeNamespace
}

func parentRefs(refs []gatewayv1.ParentReference) []graphParentRef {
	out := make([]graphParentRef, 0, len(refs))
	for _, r := range refs {
		inGroup := r.Group == nil || string(*r.Group) == gatewayv1.GroupName
		isGW := inGroup && (r.Kind == nil || *r.Kind == "Gateway")
		isLS := inGroup && r.Kind != nil && *r.Kind == graph.KindListenerSet
		var ns *string
		if r.Namespace != nil {
			s := string(*r.Namespace)
			ns = &s
		}
		out = append(out, graphParentRef{isGateway: isGW, isListenerSet: isLS, ns: ns, name: string(r.Name)})
	}
	return out
}
