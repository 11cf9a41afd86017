package status

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
)

// MaxAncestors is GEP-713's limit on a policy's ancestor statuses.
const MaxAncestors = 16

// Ancestor is a policy's outcome for one ancestor, with the data plane's
// answer for the configuration that carries it.
type Ancestor struct {
	Ref       gatewayv1.ParentReference
	Outcome   *policy.Outcome
	DataPlane DataPlane
}

// GatewayAncestor returns the ancestor reference of a Gateway.
func GatewayAncestor(gw types.NamespacedName) gatewayv1.ParentReference {
	group, kind, ns := gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind("Gateway"), gatewayv1.Namespace(gw.Namespace)
	return gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gatewayv1.ObjectName(gw.Name)}
}

// TargetNotFound is the ancestor entry for a target that does not exist:
// its ancestorRef is the target itself, of that API group.
func TargetNotFound(targetGroup string, t graph.ObjectRef, generation int64) Ancestor {
	group, kind, ns := gatewayv1.Group(targetGroup), gatewayv1.Kind(t.Kind), gatewayv1.Namespace(t.Key.Namespace)
	return Ancestor{
		Ref: gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gatewayv1.ObjectName(t.Key.Name)},
		Outcome: &policy.Outcome{Generation: generation, Accepted: conditions.False(string(gatewayv1.PolicyConditionAccepted),
			string(gatewayv1.PolicyReasonTargetNotFound), t.String()+" not found")},
	}
}

// InvalidTarget is the ancestor entry of a policy target that is not of a
// kind the policy can target (targets names those): nothing of the policy
// can apply to it.
func InvalidTarget(ref gatewayv1.LocalPolicyTargetReference, namespace string, generation int64, targets string) Ancestor {
	group, kind, ns := ref.Group, ref.Kind, gatewayv1.Namespace(namespace)
	return Ancestor{
		Ref: gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: ref.Name},
		Outcome: &policy.Outcome{Generation: generation, Accepted: conditions.False(string(gatewayv1.PolicyConditionAccepted),
			string(gatewayv1.PolicyReasonInvalid), fmt.Sprintf("%s %s/%s (group %q) "+notATarget+": it targets %s",
				ref.Kind, namespace, ref.Name, ref.Group, targets))},
	}
}

// notATarget says in an InvalidTarget entry's message that its reference
// is not a target.
const notATarget = "is not a target a policy can have"

// IsTargetEntry says whether an ancestor status is a TargetNotFound or an
// InvalidTarget entry: one no Gateway decides.
func IsTargetEntry(a gatewayv1.PolicyAncestorStatus) bool {
	c := meta.FindStatusCondition(a.Conditions, string(gatewayv1.PolicyConditionAccepted))
	return c != nil && c.Status == metav1.ConditionFalse && (c.Reason == string(gatewayv1.PolicyReasonTargetNotFound) ||
		c.Reason == string(gatewayv1.PolicyReasonInvalid) && strings.Contains(c.Message, notATarget))
}

// PolicyStatus returns a policy's status from its ancestors, sorted by
// ancestor and capped at MaxAncestors, keeping other controllers' entries.
func PolicyStatus(ancestors []Ancestor, controllerName string, old gatewayv1.PolicyStatus, now metav1.Time) gatewayv1.PolicyStatus {
	return PolicyStatusKeeping(ancestors, controllerName, old, nil, now)
}

// PolicyStatusKeeping is PolicyStatus that also keeps, as they were
// written, the controller's entries for ancestors that keep says are not
// decided here (ancestors has none for them): the status writer's, for
// Gateways that have not handed their entries since the manager started.
func PolicyStatusKeeping(ancestors []Ancestor, controllerName string, old gatewayv1.PolicyStatus, keep func(gatewayv1.PolicyAncestorStatus) bool,
	now metav1.Time) gatewayv1.PolicyStatus {
	var out, kept []gatewayv1.PolicyAncestorStatus
	decided := map[string]bool{}
	for _, a := range ancestors {
		decided[RefString(a.Ref)] = true
	}
	for _, o := range old.Ancestors {
		switch {
		case string(o.ControllerName) != controllerName:
			out = append(out, o)
		case keep != nil && !decided[RefString(o.AncestorRef)] && keep(o):
			kept = append(kept, o)
		}
	}
	sort.Slice(ancestors, func(i, j int) bool { return RefString(ancestors[i].Ref) < RefString(ancestors[j].Ref) })
	ours := len(out)
	for _, a := range ancestors {
		if len(out) >= MaxAncestors {
			break
		}
		var have []metav1.Condition
		for _, o := range old.Ancestors {
			if string(o.ControllerName) == controllerName && RefString(o.AncestorRef) == RefString(a.Ref) {
				have = o.Conditions
			}
		}
		prog := policyProgrammed(a)
		if c, ok := keepProgrammed(a.DataPlane, have, a.Outcome.Generation); ok && a.Outcome.Accepted.Status == metav1.ConditionTrue &&
			a.Outcome.Blocked == nil && a.Outcome.Partial == "" && fromDataPlane(c, a.Outcome) {
			prog = c
		}
		want := []metav1.Condition{a.Outcome.Accepted, prog}
		if a.Outcome.NoProgrammed {
			want = want[:1]
		}
		if a.Outcome.ResolvedRefs != nil {
			want = append(want, *a.Outcome.ResolvedRefs)
		}
		out = append(out, gatewayv1.PolicyAncestorStatus{
			AncestorRef:    a.Ref,
			ControllerName: gatewayv1.GatewayController(controllerName),
			Conditions:     conditions.Merge(have, want, a.Outcome.Generation, now),
		})
	}
	if len(kept) > 0 {
		out = append(out, kept...)
		sort.SliceStable(out[ours:], func(i, j int) bool {
			return RefString(out[ours+i].AncestorRef) < RefString(out[ours+j].AncestorRef)
		})
		out = out[:min(len(out), MaxAncestors)]
	}
	if out == nil {
		out = []gatewayv1.PolicyAncestorStatus{}
	}
	return gatewayv1.PolicyStatus{Ancestors: out}
}

func policyProgrammed(a Ancestor) metav1.Condition {
	t := v1alpha1.PolicyConditionProgrammed
	switch {
	case a.Outcome.Accepted.Status != metav1.ConditionTrue:
		return conditions.False(t, string(gatewayv1.PolicyReasonInvalid), "the policy is not accepted, so nothing of it is configured")
	case a.Outcome.Blocked != nil:
		return *a.Outcome.Blocked
	case a.Outcome.Partial != "":
		return conditions.False(t, v1alpha1.PolicyReasonPartiallyInvalid, a.Outcome.Partial)
	}
	switch a.DataPlane.State {
	case Applied:
		return conditions.True(t, v1alpha1.PolicyReasonProgrammed, "the data plane applied the configuration with this policy")
	case Failed:
		reason := a.Outcome.DeploymentReason
		if reason == "" {
			reason = string(gatewayv1.PolicyReasonInvalid)
		}
		return conditions.False(t, reason, dataPlaneRejected+a.DataPlane.Message)
	}
	msg := a.DataPlane.Message
	if msg == "" {
		msg = "waiting for the data plane to apply the configuration with this policy"
	}
	return conditions.False(t, v1alpha1.PolicyReasonPending, msg)
}

// dataPlaneRejected starts the Programmed message of a configuration the
// data plane did not apply; the data plane's message says, per pod, why and
// what NGINX runs instead (as the Gateway's Programmed condition does).
const dataPlaneRejected = "the data plane did not apply the configuration with this policy: "

// fromDataPlane says whether an old Programmed condition is the data plane's
// answer (applied, or rejected), the only kind worth keeping while the data
// plane's state is Unknown: one that said the policy was not accepted, not
// fully programmed or blocked described the policy's outcome then, which
// is computed anew.
func fromDataPlane(c metav1.Condition, o *policy.Outcome) bool {
	switch {
	case c.Status == metav1.ConditionTrue:
		return c.Reason == v1alpha1.PolicyReasonProgrammed
	case o.DeploymentReason != "" && c.Reason == o.DeploymentReason:
		return true
	}
	return c.Reason == string(gatewayv1.PolicyReasonInvalid) && strings.HasPrefix(c.Message, dataPlaneRejected)
}

// RefString identifies an ancestor reference: its kind, namespace, name and
// section, for matching and ordering ancestor statuses.
func RefString(r gatewayv1.ParentReference) string {
	s := ""
	if r.Kind != nil {
		s += string(*r.Kind)
	}
	if r.Namespace != nil {
		s += "/" + string(*r.Namespace)
	}
	s += "/" + string(r.Name)
	if r.SectionName != nil {
		s += "/" + string(*r.SectionName)
	}
	return s
}

// Affected returns the <Kind>Affected condition for an object a policy kind
// affects.
func Affected(condType, kind string) metav1.Condition {
	return conditions.True(condType, v1alpha1.PolicyReasonAffected, "Object affected by a "+kind)
}
