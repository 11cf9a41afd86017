package userevents

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/status"
)

func ancestor(gw string, conds ...metav1.Condition) gatewayv1.PolicyAncestorStatus {
	return gatewayv1.PolicyAncestorStatus{AncestorRef: gatewayv1.ParentReference{Name: gatewayv1.ObjectName(gw)}, Conditions: conds}
}

func cond(typ string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg}
}

// TestPolicyEvents: a policy's owner hears once of an ancestor condition
// that turns Conflicted, Invalid or a bundle failure, not again while it
// stays so, and again when its message changes; one event for the same
// news on several Gateways.
func TestPolicyEvents(t *testing.T) {
	accepted := cond("Accepted", metav1.ConditionTrue, "Accepted", "ok")
	conflicted := cond("Accepted", metav1.ConditionFalse, "Conflicted", "default/older wins")
	fetch := cond("Programmed", metav1.ConditionFalse, "FetchError", "storage down; the last good bundle stays in force")
	cases := []struct {
		name     string
		old, cur []gatewayv1.PolicyAncestorStatus
		want     []string // Reason: note
	}{
		{"nothing to tell", []gatewayv1.PolicyAncestorStatus{ancestor("a", accepted)}, []gatewayv1.PolicyAncestorStatus{ancestor("a", accepted)}, nil},
		{"turns conflicted on two Gateways", []gatewayv1.PolicyAncestorStatus{ancestor("a", accepted)},
			[]gatewayv1.PolicyAncestorStatus{ancestor("a", conflicted), ancestor("b", conflicted)}, []string{"Conflicted: default/older wins"}},
		{"stays conflicted", []gatewayv1.PolicyAncestorStatus{ancestor("a", conflicted)}, []gatewayv1.PolicyAncestorStatus{ancestor("a", conflicted)}, nil},
		{"a new winner", []gatewayv1.PolicyAncestorStatus{ancestor("a", conflicted)},
			[]gatewayv1.PolicyAncestorStatus{ancestor("a", cond("Accepted", metav1.ConditionFalse, "Conflicted", "default/newer wins"))}, []string{"Conflicted: default/newer wins"}},
		{"a bundle update fails", nil, []gatewayv1.PolicyAncestorStatus{ancestor("a", accepted, fetch)},
			[]string{"BundleUpdateFailed: storage down; the last good bundle stays in force"}},
		{"recovered: no event", []gatewayv1.PolicyAncestorStatus{ancestor("a", fetch)}, []gatewayv1.PolicyAncestorStatus{ancestor("a", accepted)}, nil},
		// The recorder folds one object's events of one reason into a
		// series keeping the first Note: Programmed=False/Invalid (which
		// follows from Accepted) must not make a second Invalid event, and
		// different news of one reason share one event.
		{"refused: the Accepted message only", []gatewayv1.PolicyAncestorStatus{ancestor("a", accepted)},
			[]gatewayv1.PolicyAncestorStatus{ancestor("a", cond("Accepted", metav1.ConditionFalse, "Invalid", "NGINX would reject it"),
				cond("Programmed", metav1.ConditionFalse, "Invalid", "the policy is not accepted"))},
			[]string{"Invalid: NGINX would reject it"}},
		{"different winners on two Gateways", nil,
			[]gatewayv1.PolicyAncestorStatus{ancestor("a", conflicted), ancestor("b", cond("Accepted", metav1.ConditionFalse, "Conflicted", "default/b-winner wins"))},
			[]string{"Conflicted: default/b-winner wins; default/older wins"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, e := range OfPolicy(c.old, c.cur) {
				if e.Type != corev1.EventTypeWarning {
					t.Errorf("event %+v is not a warning", e)
				}
				got = append(got, e.Reason+": "+e.Note)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("events %q, want %q", got, c.want)
			}
		})
	}
}

// TestDataPlaneEvents: a Gateway's events mark changes of its data plane
// only: a refused apply once (again if NGINX says something else), the
// recovery once, nothing while an answer is awaited or unknown, a data
// plane that cannot be made ready once per problem, a configuration held
// back once per reason and its release once.
func TestDataPlaneEvents(t *testing.T) {
	gw := types.NamespacedName{Namespace: "ns", Name: "gw"}
	d := &DataPlane{}
	failed := status.DataPlane{State: status.Failed, Message: "pod p: [emerg] x"}
	noAddress := &metav1.Condition{Reason: "AddressNotAssigned", Message: "the load balancer has not assigned 10.0.0.1"}
	const quota, deadline = "cannot create pods: exceeded quota", "is not progressing: ProgressDeadlineExceeded"
	steps := []struct {
		dp      status.DataPlane
		problem *metav1.Condition
		stalled string
		held    string
		want    string
	}{
		{status.DataPlane{State: status.Pending}, nil, "", "", ""},
		{status.DataPlane{State: status.Applied}, nil, "", "", ""},
		{failed, nil, "", "", "ApplyFailed"},
		{failed, nil, "", "", ""},
		{status.DataPlane{State: status.Unknown}, nil, "", "", ""},
		{status.DataPlane{State: status.Failed, Message: "pod p: [emerg] y"}, nil, "", "", "ApplyFailed"},
		{status.DataPlane{State: status.Pending}, nil, "", "", ""},
		{status.DataPlane{State: status.Applied}, nil, "", "", "ApplyRecovered"}, // through a pending push
		{status.DataPlane{State: status.Applied}, noAddress, "", "", "DataPlaneNotReady"},
		{status.DataPlane{State: status.Applied}, noAddress, "", "", ""},
		{failed, nil, "", "", "ApplyFailed"},
		{status.DataPlane{State: status.Applied}, nil, "", "", "ApplyRecovered"},
		{status.DataPlane{State: status.Pending}, nil, quota, "", "DataPlaneNotReady"},
		{status.DataPlane{State: status.Pending}, nil, quota, "", ""},
		{status.DataPlane{State: status.Pending}, nil, deadline, "", "DataPlaneNotReady"},
		{status.DataPlane{State: status.Applied}, nil, "", "", ""},
		{status.DataPlane{State: status.Applied}, nil, quota, "", "DataPlaneNotReady"}, // stalled again
		{status.DataPlane{State: status.Pending}, nil, "", "bundle b missing", "ConfigurationHeld"},
		{status.DataPlane{State: status.Pending}, nil, "", "bundle b missing", ""},
		{status.DataPlane{State: status.Pending}, nil, "", "bundle c missing", "ConfigurationHeld"},
		{status.DataPlane{State: status.Applied}, nil, "", "", "ConfigurationReleased"},
		{status.DataPlane{State: status.Applied}, nil, "", "", ""},
	}
	for i, s := range steps {
		var got []string
		for _, e := range d.Observe(gw, s.dp, s.problem, s.stalled, s.held) {
			got = append(got, e.Reason)
		}
		if strings.Join(got, ",") != s.want {
			t.Errorf("step %d (%+v, problem %v): events %v, want %q", i, s.dp, s.problem != nil, got, s.want)
		}
	}
	d.Forget(gw)
	if evs := d.Observe(gw, failed, nil, "", ""); len(evs) != 1 {
		t.Errorf("after forget, a failing data plane: %v, want ApplyFailed once", evs)
	}
}
