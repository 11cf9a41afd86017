package status

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
)

// BackendTLSPolicy returns a BackendTLSPolicy's status: for each Gateway of
// Gatewall's whose routes reach a target Service (at most MaxAncestors,
// sorted), the policy's conditions; other controllers' entries are kept.
func BackendTLSPolicy(gateways []types.NamespacedName, conds []metav1.Condition, controllerName string, generation int64, old gatewayv1.PolicyStatus, now metav1.Time) gatewayv1.PolicyStatus {
	var out []gatewayv1.PolicyAncestorStatus
	for _, o := range old.Ancestors {
		if string(o.ControllerName) != controllerName {
			out = append(out, o)
		}
	}
	sort.Slice(gateways, func(i, j int) bool { return gateways[i].String() < gateways[j].String() })
	for _, gw := range gateways {
		if len(out) >= MaxAncestors {
			break
		}
		ref := gatewayv1.ParentReference{
			Group: ptr.To(gatewayv1.Group(gatewayv1.GroupName)), Kind: ptr.To(gatewayv1.Kind("Gateway")),
			Namespace: ptr.To(gatewayv1.Namespace(gw.Namespace)), Name: gatewayv1.ObjectName(gw.Name),
		}
		var have []metav1.Condition
		for _, o := range old.Ancestors {
			if string(o.ControllerName) == controllerName && RefString(o.AncestorRef) == RefString(ref) {
				have = o.Conditions
			}
		}
		out = append(out, gatewayv1.PolicyAncestorStatus{
			AncestorRef:    ref,
			ControllerName: gatewayv1.GatewayController(controllerName),
			Conditions:     conditions.Merge(have, conds, generation, now),
		})
	}
	if out == nil {
		out = []gatewayv1.PolicyAncestorStatus{}
	}
	return gatewayv1.PolicyStatus{Ancestors: out}
}
