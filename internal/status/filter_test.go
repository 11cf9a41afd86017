package status

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
)

// TestExtensionFilterStatus: a filter's entry is Accepted, Invalid, or
// Accepted but not Programmed (naming why); other controllers' entries
// are kept (within the CRD's 16, ours always among them) and entries are
// sorted; a condition whose status did not change keeps its transition time.
func TestExtensionFilterStatus(t *testing.T) {
	ref := graph.ObjectRef{Kind: "AuthenticationFilter"}
	theirs := func(n int) []v1alpha1.ControllerStatus {
		var out []v1alpha1.ControllerStatus
		for i := range n {
			out = append(out, v1alpha1.ControllerStatus{ControllerName: gatewayv1.GatewayController(fmt.Sprintf("z.example.com/c%02d", i)),
				Conditions: []metav1.Condition{conditions.True("Accepted", "Accepted", "theirs")}})
		}
		return out
	}
	for name, c := range map[string]struct {
		ef   *graph.ExtensionFilter
		want string
	}{
		"valid":          {&graph.ExtensionFilter{Ref: ref, Detail: "Secret a/b holds 2 users"}, "Accepted=True/Accepted"},
		"invalid":        {&graph.ExtensionFilter{Ref: ref, Error: "bad", Invalid: true}, "Accepted=False/Invalid"},
		"not programmed": {&graph.ExtensionFilter{Ref: ref, Error: "no JWT", Reason: "NotImplemented"}, "Accepted=True/Accepted Programmed=False/NotImplemented"},
	} {
		t.Run(name, func(t *testing.T) {
			got := ExtensionFilter(c.ef, ours, 3, theirs(2), now)
			if len(got) != 3 || got[0].ControllerName != ours || got[1].ControllerName != "z.example.com/c00" {
				t.Fatalf("entries %v, want ours then the two others, sorted", got)
			}
			s := ""
			for _, cond := range got[0].Conditions {
				if s != "" {
					s += " "
				}
				s += fmt.Sprintf("%s=%s/%s", cond.Type, cond.Status, cond.Reason)
				if cond.ObservedGeneration != 3 {
					t.Errorf("%s is of generation %d", cond.Type, cond.ObservedGeneration)
				}
			}
			if s != c.want {
				t.Errorf("conditions %s, want %s", s, c.want)
			}
		})
	}
	valid := &graph.ExtensionFilter{Ref: ref}
	old := ExtensionFilter(valid, ours, 1, nil, then)
	if again := ExtensionFilter(valid, ours, 2, old, now); !again[0].Conditions[0].LastTransitionTime.Equal(&then) {
		t.Errorf("an unchanged Accepted moved its transition time to %v", again[0].Conditions[0].LastTransitionTime)
	}
	if got := ExtensionFilter(valid, ours, 1, theirs(20), now); len(got) != 16 || got[0].ControllerName != ours {
		t.Errorf("%d entries, first %s: want 16, ours kept", len(got), got[0].ControllerName)
	}
}
