package policy

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=backendtlspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=backendtlspolicies/status,verbs=get;update;patch

// backendTLSKind is the Gateway API's BackendTLSPolicy: a direct policy on
// Services that says how NGINX speaks TLS to them. The graph applies it to
// backends, since it decides their protocol, and decides its conflicts and
// references (graph.BackendTLSPolicyOutcome); the engine gives it its
// ancestors. Its conditions are the Gateway API's: Accepted and
// ResolvedRefs, no Programmed.
var backendTLSKind Kind = backendTLSPolicies{}

type backendTLSPolicies struct{}

func (backendTLSPolicies) Name() string               { return "BackendTLSPolicy" }
func (backendTLSPolicies) AffectedType() string       { return "" }
func (backendTLSPolicies) NewObject() client.Object   { return &gatewayv1.BackendTLSPolicy{} }
func (backendTLSPolicies) NewList() client.ObjectList { return &gatewayv1.BackendTLSPolicyList{} }
func (backendTLSPolicies) Targets() TargetKinds       { return ServiceTargets }
func (backendTLSPolicies) TargetsField() string       { return "targetRefs" }
func (backendTLSPolicies) Reads() []string            { return []string{"ConfigMap", "Secret"} }
func (backendTLSPolicies) NoProgrammed()              {}
func (backendTLSPolicies) Validate(p v1alpha1.Policy) error {
	return graph.CheckBackendTLSPolicy(p.(BackendTLSView).BackendTLSPolicy)
}

func (backendTLSPolicies) View(obj client.Object) v1alpha1.PolicyWithStatus {
	return BackendTLSView{obj.(*gatewayv1.BackendTLSPolicy)}
}

func (backendTLSPolicies) Policies(in *graph.Input) []v1alpha1.PolicyWithStatus {
	out := make([]v1alpha1.PolicyWithStatus, 0, len(in.BackendTLSPolicies))
	for _, p := range in.BackendTLSPolicies {
		out = append(out, BackendTLSView{p})
	}
	return out
}

// Evaluate gives each policy whose target Service a route of the Gateway
// proxies to (a backend or a mirror of an HTTPRoute or GRPCRoute rule,
// valid or not: a policy that is not usable makes its backends invalid) its
// outcome there. TLSRoutes, TCPRoutes and UDPRoutes pass bytes on, with no
// TLS of NGINX's own to the backend, so a Service used only by them makes
// no ancestor.
func (backendTLSPolicies) Evaluate(g *Gateway, in *graph.Input) Attachment {
	res := newResult("")
	if len(in.BackendTLSPolicies) == 0 {
		return res // not worth a look at every route
	}
	used := usedServices(g.Gateway)
	for k, p := range in.BackendTLSPolicies {
		if !usesTarget(used, p) {
			continue
		}
		o := &Outcome{Policy: k, Generation: p.Generation}
		for _, c := range graph.BackendTLSPolicyOutcome(in, p).Conditions {
			switch c.Type {
			case string(gatewayv1.PolicyConditionAccepted):
				o.Accepted = c
			case string(gatewayv1.BackendTLSPolicyConditionResolvedRefs):
				o.ResolvedRefs = &c
			}
		}
		res.Outcomes[k] = o
	}
	return res
}

// usedServices are the Services the HTTPRoutes and GRPCRoutes of a
// Gateway's graph use as backends or mirrors, valid or not.
func usedServices(g *graph.Gateway) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for _, r := range g.Routes {
		if !graph.PassesConnections(r.Kind) {
			addBackendServices(out, r, false)
		}
	}
	return out
}

func usesTarget(used map[types.NamespacedName]bool, p *gatewayv1.BackendTLSPolicy) bool {
	for _, t := range p.Spec.TargetRefs {
		if graph.TargetsService(t.LocalPolicyTargetReference) && used[types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)}] {
			return true
		}
	}
	return false
}

// BackendTLSView is a BackendTLSPolicy as the engine reads it.
type BackendTLSView struct{ *gatewayv1.BackendTLSPolicy }

// PolicyTargetRefs are the policy's targets, each object once (the graph
// reads their sectionNames).
func (v BackendTLSView) PolicyTargetRefs() []gatewayv1.LocalPolicyTargetReference {
	var out []gatewayv1.LocalPolicyTargetReference
	for _, t := range v.Spec.TargetRefs {
		ref := t.LocalPolicyTargetReference
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// PolicyStatus is the policy's status, to read and to set.
func (v BackendTLSView) PolicyStatus() *gatewayv1.PolicyStatus { return &v.Status }
