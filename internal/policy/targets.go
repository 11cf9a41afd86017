package policy

import (
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// TargetKinds are the kinds of object a policy kind can target, and how
// status messages name them.
type TargetKinds struct {
	// Group is the API group of the kinds ("" is the core group, which
	// targetRefs may also write "core").
	Group string
	Kinds []string
	// Text names them in messages.
	Text string
}

// GatewayAPITargets are the targets of the inherited kinds and WAF.
var GatewayAPITargets = TargetKinds{
	Group: gatewayv1.GroupName,
	Kinds: []string{"Gateway", graph.KindHTTPRoute, graph.KindGRPCRoute},
	Text:  "Gateways, HTTPRoutes and GRPCRoutes of group " + gatewayv1.GroupName,
}

// ServiceTargets are the targets of policies on backends.
var ServiceTargets = TargetKinds{Group: "", Kinds: []string{"Service"}, Text: "Services of the core group"}

// Allow says whether a policy of the kind can target ref.
func (t TargetKinds) Allow(ref gatewayv1.LocalPolicyTargetReference) bool {
	group := string(ref.Group)
	if group == "core" {
		group = ""
	}
	return group == t.Group && slices.Contains(t.Kinds, string(ref.Kind))
}
