package status

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// TestListenerStatusesHaveUniqueNames: the API server refuses a status
// that lists a listener name twice, so a Gateway whose listeners repeat a
// name (the graph refuses it) reports the first of each name only.
func TestListenerStatusesHaveUniqueNames(t *testing.T) {
	listener := func(name string, port gatewayv1.PortNumber) *graph.Listener {
		return &graph.Listener{Name: name, Source: gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port}}
	}
	g := &graph.Gateway{
		Source:    &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"}},
		Listeners: []*graph.Listener{listener("http", 80), listener("http", 8080), listener("other", 81)},
	}
	st := Gateway(g, Offline, nil, nil, nil, gatewayv1.GatewayStatus{}, now)
	var names []gatewayv1.SectionName
	for _, l := range st.Listeners {
		names = append(names, l.Name)
	}
	if len(names) != 2 || names[0] != "http" || names[1] != "other" {
		t.Errorf("listener statuses %v, want http and other", names)
	}
}

// TestProgrammedStandsWhileServingAnUpdate: while the data plane applies a
// newer configuration of the same Gateway generation and still serves the
// one before (a route changed), Programmed True stands; it does not for a
// newer generation, and without pods serving it is Pending.
func TestProgrammedStandsWhileServingAnUpdate(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", Generation: 2}}
	g := &graph.Gateway{Source: gw, Key: types.NamespacedName{Namespace: "ns", Name: "gw"}, Valid: true}
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	old := func(st metav1.ConditionStatus, reason string, gen int64) gatewayv1.GatewayStatus {
		return gatewayv1.GatewayStatus{Conditions: []metav1.Condition{{Type: string(gatewayv1.GatewayConditionProgrammed), Status: st,
			Reason: reason, Message: "before", ObservedGeneration: gen, LastTransitionTime: then}}}
	}
	updating := DataPlane{State: Pending, Message: "0 of 1 data plane pods applied the configuration", Serving: true}
	for _, tc := range []struct {
		name string
		dp   DataPlane
		old  gatewayv1.GatewayStatus
		want metav1.ConditionStatus
	}{
		{"serving an update keeps True", updating, old(metav1.ConditionTrue, "Programmed", 2), metav1.ConditionTrue},
		{"not serving: Pending", DataPlane{State: Pending, Message: "no pod"}, old(metav1.ConditionTrue, "Programmed", 2), metav1.ConditionFalse},
		{"a newer generation is not programmed yet", updating, old(metav1.ConditionTrue, "Programmed", 1), metav1.ConditionFalse},
		{"a failure is not kept", updating, old(metav1.ConditionFalse, "Invalid", 2), metav1.ConditionFalse},
	} {
		st := Gateway(g, tc.dp, nil, nil, nil, tc.old, metav1.Now())
		c := meta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		if c == nil || c.Status != tc.want {
			t.Errorf("%s: Programmed %+v, want %s", tc.name, c, tc.want)
			continue
		}
		if tc.want == metav1.ConditionTrue && (c.Message != "before" || !c.LastTransitionTime.Equal(&then) || c.ObservedGeneration != 2) {
			t.Errorf("%s: Programmed %+v, want the condition before, for generation 2", tc.name, c)
		}
		if tc.want == metav1.ConditionFalse && c.Reason != string(gatewayv1.GatewayReasonPending) {
			t.Errorf("%s: Programmed %+v, want Pending", tc.name, c)
		}
	}
}
