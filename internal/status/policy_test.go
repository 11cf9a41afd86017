package status

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
)

const ours = "gateway.nginx.org/nginx-gateway-controller"

var (
	then = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now  = metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
)

func accepted() metav1.Condition {
	return conditions.True(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonAccepted), "Policy is accepted")
}

func gatewayNamed(name string) gatewayv1.ParentReference {
	return GatewayAncestor(types.NamespacedName{Namespace: "default", Name: name})
}

// TestPolicyStatusCapsAncestors: GEP-713 allows 16 ancestor statuses. Other
// controllers' entries are kept and count towards the cap; Gatewall's come
// sorted by ancestor, so which ones are left out is deterministic.
func TestPolicyStatusCapsAncestors(t *testing.T) {
	var ancestors []Ancestor
	for i := 19; i >= 0; i-- { // unsorted on purpose
		ancestors = append(ancestors, Ancestor{Ref: gatewayNamed(fmt.Sprintf("gw-%02d", i)),
			Outcome: &policy.Outcome{Generation: 1, Accepted: accepted()}, DataPlane: DataPlane{State: Applied}})
	}
	other := gatewayv1.PolicyAncestorStatus{AncestorRef: gatewayNamed("theirs"), ControllerName: "example.com/other",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: then}}}
	stale := gatewayv1.PolicyAncestorStatus{AncestorRef: gatewayNamed("gone"), ControllerName: ours}

	st := PolicyStatus(ancestors, ours, gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{other, stale}}, now)
	if len(st.Ancestors) != MaxAncestors {
		t.Fatalf("%d ancestors; want the cap, %d", len(st.Ancestors), MaxAncestors)
	}
	if st.Ancestors[0].ControllerName != "example.com/other" || st.Ancestors[0].AncestorRef.Name != "theirs" {
		t.Errorf("first entry %+v; want the other controller's, kept as it was", st.Ancestors[0])
	}
	for i, a := range st.Ancestors[1:] {
		if want := fmt.Sprintf("gw-%02d", i); string(a.AncestorRef.Name) != want || string(a.ControllerName) != ours {
			t.Errorf("entry %d is %s of %s; want %s of %s", i+1, a.AncestorRef.Name, a.ControllerName, want, ours)
		}
	}

	if st := PolicyStatus(ancestors[:3], ours, gatewayv1.PolicyStatus{}, now); len(st.Ancestors) != 3 {
		t.Errorf("%d ancestors under the cap; want 3", len(st.Ancestors))
	}
	if st := PolicyStatus(nil, ours, gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{stale}}, now); st.Ancestors == nil || len(st.Ancestors) != 0 {
		t.Errorf("no ancestors: %#v; want an empty list (not nil) with our stale entry gone", st.Ancestors)
	}
}

// TestPolicyStatusProgrammed: Programmed comes from the data plane's answer,
// never from a default, unless the policy's own outcome already says it is
// not (fully) configured. While the data plane's state is Unknown (the
// manager restarted), the previous answer for this generation stands.
func TestPolicyStatusProgrammed(t *testing.T) {
	prog := v1alpha1.PolicyConditionProgrammed
	blocked := conditions.False(prog, v1alpha1.WAFReasonFetchError, "APPolicy default/p bundle 1234: connection refused")
	refused := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), "NGINX would reject it")
	old := func(status metav1.ConditionStatus, reason, msg string, gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: prog, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: then}}
	}
	cases := []struct {
		name    string
		outcome policy.Outcome
		dp      DataPlane
		old     []metav1.Condition
		want    string // status/reason: message prefix
		since   metav1.Time
	}{
		{name: "applied", dp: DataPlane{State: Applied}, want: "True/Programmed: the data plane applied"},
		{name: "pending with the data plane's message", dp: DataPlane{State: Pending, Message: "no pod connected"}, want: "False/Pending: no pod connected"},
		{name: "pending without a message", dp: DataPlane{State: Pending}, want: "False/Pending: waiting for the data plane"},
		{name: "rejected: the kind's deployment reason", outcome: policy.Outcome{DeploymentReason: v1alpha1.WAFReasonDeploymentError},
			dp: DataPlane{State: Failed, Message: "nginx -t failed"}, want: "False/DeploymentError: the data plane did not apply the configuration with this policy: nginx -t failed"},
		{name: "rejected: Invalid by default", dp: DataPlane{State: Failed, Message: "nginx -t failed"}, want: "False/Invalid: the data plane did not apply"},
		{name: "not accepted, whatever the data plane did", outcome: policy.Outcome{Accepted: refused}, dp: DataPlane{State: Applied},
			want: "False/Invalid: the policy is not accepted"},
		{name: "blocked before the data plane", outcome: policy.Outcome{Blocked: &blocked}, dp: DataPlane{State: Applied},
			want: "False/FetchError: APPolicy default/p"},
		{name: "partially invalid", outcome: policy.Outcome{Partial: policy.PartiallyInvalidDisabledMessage}, dp: DataPlane{State: Applied},
			want: "False/PartiallyInvalid: Policy is not fully programmed"},
		{name: "unknown keeps the answer for this generation", dp: DataPlane{State: Unknown, Message: "no pod has reported since the restart"},
			old:  old(metav1.ConditionTrue, v1alpha1.PolicyReasonProgrammed, "the data plane applied the configuration with this policy", 2),
			want: "True/Programmed: the data plane applied", since: then},
		{name: "unknown keeps a rejection for this generation", outcome: policy.Outcome{DeploymentReason: v1alpha1.WAFReasonDeploymentError},
			dp:   DataPlane{State: Unknown, Message: "no pod has reported since the restart"},
			old:  old(metav1.ConditionFalse, v1alpha1.WAFReasonDeploymentError, "the data plane did not apply the configuration with this policy: x", 2),
			want: "False/DeploymentError: the data plane did not apply", since: then},
		{name: "unknown does not keep an older generation's answer", dp: DataPlane{State: Unknown, Message: "no pod has reported since the restart"},
			old:  old(metav1.ConditionTrue, v1alpha1.PolicyReasonProgrammed, "the data plane applied the configuration with this policy", 1),
			want: "False/Pending: no pod has reported"},
		{name: "unknown does not keep a PartiallyInvalid that no longer holds", dp: DataPlane{State: Unknown, Message: "no pod has reported since the restart"},
			old:  old(metav1.ConditionFalse, v1alpha1.PolicyReasonPartiallyInvalid, policy.PartiallyInvalidDisabledMessage, 2),
			want: "False/Pending: no pod has reported", since: then}, // still False: same transition
		{name: "unknown does not keep a fetch failure that no longer holds", dp: DataPlane{State: Unknown, Message: "no pod has reported since the restart"},
			old:  old(metav1.ConditionFalse, v1alpha1.WAFReasonFetchError, "connection refused", 2),
			want: "False/Pending: no pod has reported", since: then}, // still False: same transition
		{name: "unknown does not keep a refusal that no longer holds", dp: DataPlane{State: Unknown, Message: "no pod has reported since the restart"},
			old:  old(metav1.ConditionFalse, string(gatewayv1.PolicyReasonInvalid), "the policy is not accepted, so nothing of it is configured", 2),
			want: "False/Pending: no pod has reported", since: then}, // still False: same transition
		{name: "unknown, policy now blocked", outcome: policy.Outcome{Blocked: &blocked}, dp: DataPlane{State: Unknown},
			old:  old(metav1.ConditionTrue, v1alpha1.PolicyReasonProgrammed, "the data plane applied the configuration with this policy", 2),
			want: "False/FetchError: APPolicy default/p"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.outcome
			o.Generation = 2
			if o.Accepted.Type == "" {
				o.Accepted = accepted()
			}
			ref := gatewayNamed("gw")
			var prev gatewayv1.PolicyStatus
			if c.old != nil {
				prev.Ancestors = []gatewayv1.PolicyAncestorStatus{{AncestorRef: ref, ControllerName: ours,
					Conditions: append([]metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 2, LastTransitionTime: then}}, c.old...)}}
			}
			st := PolicyStatus([]Ancestor{{Ref: ref, Outcome: &o, DataPlane: c.dp}}, ours, prev, now)
			if len(st.Ancestors) != 1 {
				t.Fatalf("%d ancestors", len(st.Ancestors))
			}
			got := conditions.Find(st.Ancestors[0].Conditions, prog)
			if got == nil {
				t.Fatalf("no Programmed condition in %+v", st.Ancestors[0].Conditions)
			}
			status, rest, _ := strings.Cut(c.want, "/")
			reason, msg, _ := strings.Cut(rest, ": ")
			if string(got.Status) != status || got.Reason != reason || !strings.HasPrefix(got.Message, msg) {
				t.Errorf("Programmed = %s/%s: %s; want %s", got.Status, got.Reason, got.Message, c.want)
			}
			if got.ObservedGeneration != 2 {
				t.Errorf("observedGeneration %d; want the policy's, 2", got.ObservedGeneration)
			}
			since := c.since
			if since.IsZero() {
				since = now
			}
			if !got.LastTransitionTime.Equal(&since) {
				t.Errorf("lastTransitionTime %v; want %v", got.LastTransitionTime, since)
			}
		})
	}
}

// TestPolicyStatusConditions: each ancestor carries Accepted, Programmed
// and, when the kind has one, ResolvedRefs, with the policy's generation;
// a condition whose status did not change keeps its transition time.
func TestPolicyStatusConditions(t *testing.T) {
	resolved := conditions.True(v1alpha1.PolicyConditionResolvedRefs, "ResolvedRefs", "All references are resolved")
	o := &policy.Outcome{Generation: 3, Accepted: accepted(), ResolvedRefs: &resolved}
	ref := gatewayNamed("gw")
	prev := gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{{AncestorRef: ref, ControllerName: ours, Conditions: []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 2, LastTransitionTime: then},
		{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", ObservedGeneration: 2, LastTransitionTime: then},
	}}}}
	st := PolicyStatus([]Ancestor{{Ref: ref, Outcome: o, DataPlane: DataPlane{State: Pending}}}, ours, prev, now)
	var got []string
	for _, c := range st.Ancestors[0].Conditions {
		got = append(got, fmt.Sprintf("%s=%s/%s gen %d since %s", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.LastTransitionTime.Format("01-02")))
	}
	want := []string{
		"Accepted=True/Accepted gen 3 since 01-01",
		"Programmed=False/Pending gen 3 since 01-02",
		"ResolvedRefs=True/ResolvedRefs gen 3 since 01-02",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("conditions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTargetNotFound: a target that does not exist is its own ancestor
// entry, refused with TargetNotFound and not programmed.
func TestTargetNotFound(t *testing.T) {
	target := graph.ObjectRef{Kind: "HTTPRoute", Key: types.NamespacedName{Namespace: "default", Name: "nowhere"}}
	st := PolicyStatus([]Ancestor{TargetNotFound(gatewayv1.GroupName, target, 4)}, ours, gatewayv1.PolicyStatus{}, now)
	a := st.Ancestors[0]
	if *a.AncestorRef.Kind != "HTTPRoute" || a.AncestorRef.Name != "nowhere" || *a.AncestorRef.Namespace != "default" {
		t.Errorf("ancestorRef %+v; want the route", a.AncestorRef)
	}
	acc, prog := conditions.Find(a.Conditions, "Accepted"), conditions.Find(a.Conditions, "Programmed")
	if acc.Reason != string(gatewayv1.PolicyReasonTargetNotFound) || acc.Message != "HTTPRoute default/nowhere not found" || acc.ObservedGeneration != 4 {
		t.Errorf("Accepted %+v", acc)
	}
	if prog.Status != metav1.ConditionFalse {
		t.Errorf("Programmed %+v; want False", prog)
	}
}
