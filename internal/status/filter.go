package status

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
)

// maxFilterControllers is the filters' CRD limit on status.controllers.
const maxFilterControllers = 16

// ExtensionFilter returns the status entries of a filter of an
// ExtensionFilterKind (NGINX Gateway Fabric's shape: one entry per
// controller) with this controller's entry decided from the filter as the
// graph resolved it: Accepted (Invalid, with what is wrong), and for a
// valid filter the data plane cannot enforce Programmed=False, naming why
// (its rules answer 500). Other controllers' entries are kept; entries are
// sorted by controller name, ours always kept within the CRD's limit.
// The filter does not depend on a Gateway: every Gateway's rules that use
// it get the same.
func ExtensionFilter(ef *graph.ExtensionFilter, controllerName string, generation int64, old []v1alpha1.ControllerStatus, now metav1.Time) []v1alpha1.ControllerStatus {
	var have []metav1.Condition
	var others []v1alpha1.ControllerStatus
	for _, c := range old {
		if string(c.ControllerName) == controllerName {
			have = c.Conditions
		} else {
			others = append(others, c)
		}
	}
	ours := v1alpha1.ControllerStatus{
		ControllerName: gatewayv1.GatewayController(controllerName),
		Conditions:     conditions.Merge(have, filterConditions(ef), generation, now),
	}
	sort.Slice(others, func(i, j int) bool { return others[i].ControllerName < others[j].ControllerName })
	if len(others) > maxFilterControllers-1 {
		others = others[:maxFilterControllers-1]
	}
	out := append(others, ours)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ControllerName < out[j].ControllerName })
	return out
}

// filterConditions are this controller's conditions on a filter.
func filterConditions(ef *graph.ExtensionFilter) []metav1.Condition {
	accepted, programmed := v1alpha1.AuthenticationFilterConditionAccepted, v1alpha1.AuthenticationFilterConditionProgrammed
	kind := ef.Ref.Kind
	switch {
	case ef.Error != "" && ef.Invalid && ef.Reason != "":
		// Not used for a reason of the installation's (snippets disabled).
		return []metav1.Condition{conditions.False(accepted, ef.Reason,
			kind+" is not accepted, and the route rules that use it answer 500: "+ef.Error)}
	case ef.Error != "" && ef.Invalid:
		return []metav1.Condition{conditions.False(accepted, v1alpha1.AuthenticationFilterReasonInvalid,
			kind+" is invalid, and the route rules that use it answer 500: "+ef.Error)}
	case ef.Error != "":
		return []metav1.Condition{
			conditions.True(accepted, v1alpha1.AuthenticationFilterReasonAccepted, kind+" is accepted, but not programmed (see Programmed)"),
			conditions.False(programmed, ef.Reason, ef.Error+"; the route rules that use it answer 500"),
		}
	}
	msg := kind + " is accepted"
	if ef.Detail != "" {
		msg += ": " + ef.Detail
	}
	return []metav1.Condition{conditions.True(accepted, v1alpha1.AuthenticationFilterReasonAccepted, msg)}
}
