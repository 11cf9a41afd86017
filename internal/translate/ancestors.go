package translate

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/status"
)

// PolicyAncestors returns a policy's ancestor statuses: one per Gateway
// whose translation has an outcome for it, with that Gateway's data plane
// answer (GatewayAncestors); plus its TargetAncestors. The render command
// uses it; the manager's Gateway reconciler hands each policy its
// Gateway's entry and the policy reconcilers hand the targets' entries.
func PolicyAncestors(kind policy.Kind, p v1alpha1.Policy, gateways []*Translation,
	in *graph.Input, dataPlane func(types.NamespacedName) status.DataPlane) []status.Ancestor {
	key := types.NamespacedName{Namespace: p.GetNamespace(), Name: p.GetName()}
	var out []status.Ancestor
	for _, t := range gateways {
		if a, ok := GatewayAncestor(kind, t, key, dataPlane(t.Graph.Key)); ok {
			out = append(out, a)
		}
	}
	return append(out, TargetAncestors(kind, p, in)...)
}

// GatewayAncestor returns a policy's ancestor status for the Gateway of
// translation t, with the Gateway's data plane answer dp; false when the
// Gateway is not an ancestor of the policy.
func GatewayAncestor(kind policy.Kind, t *Translation, key types.NamespacedName, dp status.DataPlane) (status.Ancestor, bool) {
	o := t.Policies[kind.Name()].PolicyOutcomes()[key]
	if o == nil {
		return status.Ancestor{}, false
	}
	return status.Ancestor{Ref: status.GatewayAncestor(t.Graph.Key), Outcome: o, DataPlane: dp}, true
}

// TargetAncestors returns the ancestor statuses no Gateway decides: for
// each target of a policy that is not of a kind the policy can target, an
// Invalid entry saying so, and TargetNotFound for those that do not exist
// in the snapshot in.
func TargetAncestors(kind policy.Kind, p v1alpha1.Policy, in *graph.Input) []status.Ancestor {
	var out []status.Ancestor
	refs := p.PolicyTargetRefs()
	for i, tr := range policy.TargetsOf(p, refs) {
		switch ref := refs[i]; {
		case !kind.Targets().Allow(ref):
			out = append(out, status.InvalidTarget(ref, p.GetNamespace(), p.GetGeneration(), kind.Targets().Text))
		case !Exists(in, tr):
			out = append(out, status.TargetNotFound(kind.Targets().Group, tr, p.GetGeneration()))
		}
	}
	return out
}

// PolicyStatusOf is what a policy's status is set from (SetPolicyStatus).
type PolicyStatusOf struct {
	// ControllerName is the controller whose entries are set; others'
	// stay.
	ControllerName string
	// Ancestors are the entries to write.
	Ancestors []status.Ancestor
	// Keep says which of the controller's entries written before that
	// Ancestors does not decide stay as they are; nil: none.
	Keep func(gatewayv1.PolicyAncestorStatus) bool
	// Attachments are the kind's attachments to every Gateway that is an
	// ancestor, for what a kind of policy.OwnStatus adds.
	Attachments []policy.Attachment
	// In is the snapshot a kind of policy.OwnStatus reads; nil leaves the
	// rest of the status as written last.
	In *graph.Input
}

// SetPolicyStatus sets a policy's status: p holds the status written last
// (whose other controllers' ancestors stay), and gets the one to write,
// with what a kind of policy.OwnStatus adds. The status writer and the
// render command both use it.
func SetPolicyStatus(kind policy.Kind, p v1alpha1.PolicyWithStatus, s PolicyStatusOf, now metav1.Time) {
	ancestors := s.Ancestors
	if _, ok := kind.(policy.Unprogrammed); ok {
		ancestors = unprogrammed(ancestors)
	}
	*p.PolicyStatus() = status.PolicyStatusKeeping(ancestors, s.ControllerName, *p.PolicyStatus(), s.Keep, now)
	own, ok := kind.(policy.OwnStatus)
	if !ok || s.In == nil {
		return
	}
	own.SetOwnStatus(p, s.Attachments, s.In, now)
}

// Attachments are a kind's attachments to the Gateways of translations.
func Attachments(kind policy.Kind, gateways []*Translation) []policy.Attachment {
	out := make([]policy.Attachment, 0, len(gateways))
	for _, t := range gateways {
		out = append(out, t.Policies[kind.Name()])
	}
	return out
}

// unprogrammed returns the ancestors with outcomes that leave Programmed out
// (copies: the translations' outcomes are shared).
func unprogrammed(ancestors []status.Ancestor) []status.Ancestor {
	out := make([]status.Ancestor, len(ancestors))
	for i, a := range ancestors {
		o := *a.Outcome
		o.NoProgrammed = true
		a.Outcome = &o
		out[i] = a
	}
	return out
}

// Exists says whether a policy target exists in the snapshot.
func Exists(in *graph.Input, t graph.ObjectRef) bool {
	switch t.Kind {
	case "Gateway":
		return in.Gateways[t.Key] != nil
	case graph.KindHTTPRoute, graph.KindGRPCRoute:
		return in.Route(t.Kind, t.Key) != nil
	case "Service":
		return in.Services[t.Key] != nil
	}
	return false
}

// TargetGateways returns the Gateways a policy's targets can have as
// ancestors: a Gateway target itself, and the Gateways a route target names
// directly or through their ListenerSets (which must be in the snapshot).
func TargetGateways(in *graph.Input, targets []graph.ObjectRef) []types.NamespacedName {
	seen := map[types.NamespacedName]bool{}
	add := func(ns string, refs []gatewayv1.ParentReference) {
		for _, ref := range refs {
			switch p := graph.ParentOf(ref, ns); {
			case p.Is("Gateway"):
				seen[p.Key] = true
			case p.Is(graph.KindListenerSet) && in.ListenerSets[p.Key] != nil:
				if gw := graph.ListenerSetParent(in.ListenerSets[p.Key]); gw.Name != "" {
					seen[gw] = true
				}
			}
		}
	}
	for _, t := range targets {
		switch t.Kind {
		case "Gateway":
			seen[t.Key] = true
		case graph.KindHTTPRoute, graph.KindGRPCRoute:
			if r := in.Route(t.Kind, t.Key); r != nil {
				add(r.GetNamespace(), routekind.ParentRefs(r))
			}
		}
	}
	out := make([]types.NamespacedName, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
