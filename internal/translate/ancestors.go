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
// answer; plus, for each target that is not of a kind the policy can
// target, an Invalid entry saying so, and TargetNotFound for those that do
// not exist. The reconcilers and the render command all use it.
func PolicyAncestors(kind policy.Kind, p v1alpha1.Policy, gateways []*Translation,
	in *graph.Input, dataPlane func(types.NamespacedName) status.DataPlane) []status.Ancestor {
	key := types.NamespacedName{Namespace: p.GetNamespace(), Name: p.GetName()}
	var out []status.Ancestor
	for _, t := range gateways {
		o := t.Policies[kind.Name()].PolicyOutcomes()[key]
		if o == nil {
			continue
		}
		out = append(out, status.Ancestor{Ref: status.GatewayAncestor(t.Graph.Key), Outcome: o, DataPlane: dataPlane(t.Graph.Key)})
	}
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

// SetPolicyStatus sets a policy's status from its ancestors: p holds the
// status written last (whose other controllers' ancestors stay), and gets
// the one to write, with what a kind of policy.OwnStatus adds from the
// Gateways' translations. The reconcilers and the render command all use it.
func SetPolicyStatus(kind policy.Kind, p v1alpha1.PolicyWithStatus, ancestors []status.Ancestor, gateways []*Translation,
	in *graph.Input, now metav1.Time) {
	if _, ok := kind.(policy.Unprogrammed); ok {
		ancestors = unprogrammed(ancestors)
	}
	*p.PolicyStatus() = status.PolicyStatus(ancestors, in.ControllerName, *p.PolicyStatus(), now)
	own, ok := kind.(policy.OwnStatus)
	if !ok {
		return
	}
	attachments := make([]policy.Attachment, 0, len(gateways))
	for _, t := range gateways {
		attachments = append(attachments, t.Policies[kind.Name()])
	}
	own.SetOwnStatus(p, attachments, in, now)
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
