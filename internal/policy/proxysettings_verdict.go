package policy

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
)

// targetIssue is why a policy does not apply in full to one of its targets.
// A target has at most one.
type targetIssue struct {
	target graph.ObjectRef
	// refused: nothing of the policy is rendered on the target.
	refused bool
	// notAttached: the target is a route not attached to the Gateway (refused too).
	notAttached bool
	// disabled: the policy's sizes are moot under an inherited disable:
	// true (msg is the proposal's fixed message, which names no target).
	disabled bool
	msg      string
}

// verdict gathers what happened to one policy on each of its targets on one
// Gateway, so that no target's outcome overwrites another's.
type verdict struct {
	// targets counts the policy's targets on this Gateway.
	targets int
	issues  []targetIssue
}

// outcome turns a verdict into the Accepted condition and the Partial
// message (see EvaluateProxySettings for the semantics).
func (v *verdict) outcome() (metav1.Condition, string) {
	refused, notAttached := 0, 0
	for _, i := range v.issues {
		if i.refused {
			refused++
		}
		if i.notAttached {
			notAttached++
		}
	}
	if refused > 0 && refused == v.targets {
		msgs := make([]string, 0, refused)
		for _, i := range v.issues {
			msgs = append(msgs, i.msg)
		}
		// GEP-713's TargetNotFound covers targets that are not valid ones.
		reason := gatewayv1.PolicyReasonInvalid
		if notAttached == refused {
			reason = gatewayv1.PolicyReasonTargetNotFound
		}
		return conditions.False(string(gatewayv1.PolicyConditionAccepted), string(reason), strings.Join(msgs, "; ")), ""
	}
	accepted := conditions.True(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonAccepted), "Policy is accepted")
	switch {
	case len(v.issues) == 0:
		return accepted, ""
	case v.targets == 1:
		// The message names the target, or is the proposal's own.
		return accepted, v.issues[0].msg
	}
	parts := make([]string, 0, len(v.issues))
	for _, i := range v.issues {
		switch {
		case i.refused:
			parts = append(parts, fmt.Sprintf("nothing of it is configured on %s: %s", i.target, i.msg))
		case i.disabled:
			parts = append(parts, fmt.Sprintf("on %s, buffer size fields (bufferSize, buffers, busyBuffersSize) are ignored because buffering is disabled by an ancestor policy (set disable to false to apply them)", i.target))
		default:
			parts = append(parts, i.msg)
		}
	}
	return accepted, "Policy is not fully programmed: " + strings.Join(parts, "; ")
}
