package controller

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/translate"
)

// TestRecordRefusedPolicies: refused policies of a Gateway are counted by
// kind and reason beside its own objects, and a later translation replaces
// the counts.
func TestRecordRefusedPolicies(t *testing.T) {
	gw := types.NamespacedName{Namespace: "ns", Name: "gw"}
	outcome := func(name, reason string) *policy.Outcome {
		c := conditions.True("Accepted", "Accepted", "ok")
		if reason != "" {
			c = conditions.False("Accepted", reason, "no")
		}
		return &policy.Outcome{Policy: types.NamespacedName{Namespace: "ns", Name: name}, Accepted: c}
	}
	tr := &translate.Translation{
		Graph: &graph.Gateway{Key: gw, Conditions: []metav1.Condition{conditions.True("Accepted", "Accepted", "ok")}},
		Policies: map[string]policy.Attachment{
			"ProxySettingsPolicy": &policy.Result{Outcomes: map[types.NamespacedName]*policy.Outcome{
				{Namespace: "ns", Name: "a"}: outcome("a", "Conflicted"),
				{Namespace: "ns", Name: "b"}: outcome("b", "Conflicted"),
				{Namespace: "ns", Name: "c"}: outcome("c", ""),
			}},
			"WAFGatewayBindingPolicy": &policy.WAF{Outcomes: map[types.NamespacedName]*policy.Outcome{{Namespace: "ns", Name: "w"}: outcome("w", "Invalid")}},
		},
	}
	recordRefused(tr)
	refused := func(kind, reason string) float64 {
		return testutil.ToFloat64(metrics.Refused.WithLabelValues(gw.Namespace, gw.Name, kind, reason))
	}
	if got := refused("ProxySettingsPolicy", "Conflicted"); got != 2 {
		t.Errorf("ProxySettingsPolicy Conflicted %v, want 2", got)
	}
	if got := refused("WAFGatewayBindingPolicy", "Invalid"); got != 1 {
		t.Errorf("WAFGatewayBindingPolicy Invalid %v, want 1", got)
	}
	tr.Policies["ProxySettingsPolicy"].(*policy.Result).Outcomes = nil
	recordRefused(tr)
	if got := testutil.CollectAndCount(metrics.Refused); got != 1 {
		t.Errorf("%d series after the conflict ended, want the WAF policy's only", got)
	}
}
