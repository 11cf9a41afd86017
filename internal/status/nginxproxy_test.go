package status

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
)

func TestNginxProxyStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	np := func(mod func(*v1alpha2.NginxProxy)) *v1alpha2.NginxProxy {
		p := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 3}}
		mod(p)
		return p
	}
	for _, c := range []struct {
		name           string
		np             *v1alpha2.NginxProxy
		status, reason string
		message        string
	}{
		{"valid", np(func(*v1alpha2.NginxProxy) {}), "True", "Accepted", "NginxProxy is accepted"},
		// The API server would refuse it; Go re-validates what bypassed it.
		{"invalid", np(func(p *v1alpha2.NginxProxy) { p.Spec.WorkerConnections = ptr.To[int32](-1) }), "False", "Invalid", "workerConnections"},
		{"unreadable", np(func(p *v1alpha2.NginxProxy) {
			p.Annotations = map[string]string{graph.UnreadableAnnotation: "spec.l4: expected an object"}
		}), "False", "Invalid", "spec.l4: expected an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := NginxProxy(c.np, v1alpha2.NginxProxyStatus{}, t0)
			if len(got.Conditions) != 1 {
				t.Fatalf("conditions %+v, want Accepted alone", got.Conditions)
			}
			a := got.Conditions[0]
			if a.Type != "Accepted" || string(a.Status) != c.status || a.Reason != c.reason || !strings.Contains(a.Message, c.message) || a.ObservedGeneration != 3 || !a.LastTransitionTime.Equal(&t0) {
				t.Fatalf("Accepted %+v, want %s/%s naming %q at generation 3, %v", a, c.status, c.reason, c.message, t0)
			}
			// The same verdict later keeps its transition time; a change
			// takes the new one.
			if again := NginxProxy(c.np, got, t1).Conditions[0]; !again.LastTransitionTime.Equal(&t0) {
				t.Errorf("unchanged verdict moved its transition time to %v", again.LastTransitionTime)
			}
			other := np(func(*v1alpha2.NginxProxy) {})
			if c.status == "True" {
				other.Spec.WorkerConnections = ptr.To[int32](-1)
			}
			if changed := NginxProxy(other, got, t1).Conditions[0]; !changed.LastTransitionTime.Equal(&t1) {
				t.Errorf("changed verdict kept transition time %v, want %v", changed.LastTransitionTime, t1)
			}
		})
	}
}
