package dataplane

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
)

// TestFailedProgrammedSaysWhatNGINXRuns: the Gateway's Programmed message
// claims NGINX keeps its last good configuration only when it does.
func TestFailedProgrammedSaysWhatNGINXRuns(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", Generation: 1}}
	g := &graph.Gateway{Source: gw, Key: types.NamespacedName{Namespace: "ns", Name: "gw"}, Valid: true}
	for _, tc := range []struct {
		failure  agent.Failure
		lastGood bool
		also     string
	}{
		{agent.FailureRejected, true, "rejected it"},
		{agent.FailureRetrying, true, "will try again"},
		{agent.FailureRollbackFailed, false, "what NGINX runs is not known"},
	} {
		p := agent.PodStatus{Pod: types.NamespacedName{Namespace: "ns", Name: "gw-0"}, State: agent.Failed,
			Failure: tc.failure, Message: "nginx: [emerg] unknown directive"}
		dp := status.DataPlane{State: status.Failed, Message: failureMessage(p)}
		st := status.Gateway(g, dp, nil, nil, nil, gatewayv1.GatewayStatus{}, metav1.Now())
		c := meta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		if c == nil || c.Status != metav1.ConditionFalse {
			t.Fatalf("%s: Programmed %+v", tc.failure, c)
		}
		if got := strings.Contains(c.Message, "last good"); got != tc.lastGood {
			t.Errorf("%s: message %q claims the last good configuration: %v, want %v", tc.failure, c.Message, got, tc.lastGood)
		}
		for _, want := range []string{tc.also, "gw-0", "[emerg] unknown directive"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("%s: message %q does not say %q", tc.failure, c.Message, want)
			}
		}
	}
}
