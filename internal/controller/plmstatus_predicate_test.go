package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	wafv1alpha1 "github.com/gatewall/gatewall/api/plm/waf/v1alpha1"
)

// TestPLMStatusChanged: PLM objects wake the WAF reconcilers when what
// Gatewall reads of their status changes (bundle state, location, sha256;
// processing datetime and errors), and only then; creations, deletions and
// objects that are not PLM's always pass.
func TestPLMStatusChanged(t *testing.T) {
	ready := func() plm.Status {
		return plm.Status{
			Bundle: &plm.Bundle{State: plm.BundleStateReady, Location: "s3://plm/p.tgz", Sha256: "aa", CompilerVersion: "11.1",
				Signatures: &plm.Signatures{AttackSignatures: "2026-01-01"}},
			Processing: &plm.Processing{IsCompiled: true, Datetime: "2026-01-01T00:00:00Z"},
		}
	}
	cases := []struct {
		name   string
		change func(*plm.Status)
		meta   func(*metav1.ObjectMeta)
		want   bool
	}{
		{name: "nothing", change: func(*plm.Status) {}, want: false},
		{name: "labels, annotations and resourceVersion", meta: func(m *metav1.ObjectMeta) {
			m.Labels, m.Annotations, m.ResourceVersion = map[string]string{"a": "b"}, map[string]string{"c": "d"}, "42"
		}, want: false},
		{name: "spec change (generation)", meta: func(m *metav1.ObjectMeta) { m.Generation++ }, want: false},
		{name: "compiler version", change: func(s *plm.Status) { s.Bundle.CompilerVersion = "11.2" }, want: false},
		{name: "signature dates", change: func(s *plm.Status) { s.Bundle.Signatures.AttackSignatures = "2026-02-01" }, want: false},
		{name: "isCompiled", change: func(s *plm.Status) { s.Processing.IsCompiled = false }, want: false},
		{name: "bundle emptied", change: func(s *plm.Status) { s.Bundle = &plm.Bundle{} }, want: true},
		{name: "bundle state", change: func(s *plm.Status) { s.Bundle.State = plm.BundleStateProcessing }, want: true},
		{name: "bundle location", change: func(s *plm.Status) { s.Bundle.Location = "s3://plm/p2.tgz" }, want: true},
		{name: "bundle sha256", change: func(s *plm.Status) { s.Bundle.Sha256 = "bb" }, want: true},
		{name: "bundle removed", change: func(s *plm.Status) { s.Bundle = nil }, want: true},
		{name: "processing datetime, same bundle", change: func(s *plm.Status) { s.Processing.Datetime = "2026-01-02T00:00:00Z" }, want: true},
		{name: "processing removed", change: func(s *plm.Status) { s.Processing = nil }, want: true},
		{name: "errors appear", change: func(s *plm.Status) { s.Processing.Errors = []string{"line 3: bad"} }, want: true},
		{name: "empty errors list", change: func(s *plm.Status) { s.Processing.Errors = []string{} }, want: false},
	}
	kinds := map[string]func(plm.Status, metav1.ObjectMeta) client.Object{
		"appprotect APPolicy": func(s plm.Status, m metav1.ObjectMeta) client.Object {
			return &appprotectv1.APPolicy{ObjectMeta: m, Status: s}
		},
		"appprotect APLogConf": func(s plm.Status, m metav1.ObjectMeta) client.Object {
			return &appprotectv1.APLogConf{ObjectMeta: m, Status: s}
		},
		"waf APPolicy": func(s plm.Status, m metav1.ObjectMeta) client.Object {
			return &wafv1alpha1.APPolicy{ObjectMeta: m, Status: s}
		},
		"waf APLogConf": func(s plm.Status, m metav1.ObjectMeta) client.Object {
			return &wafv1alpha1.APLogConf{ObjectMeta: m, Status: s}
		},
	}
	p := PLMStatusChanged()
	for kind, build := range kinds {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				oldMeta := metav1.ObjectMeta{Namespace: "default", Name: "p", Generation: 1, ResourceVersion: "1"}
				newMeta := *oldMeta.DeepCopy()
				if c.meta != nil {
					c.meta(&newMeta)
				}
				newStatus := ready()
				if c.change != nil {
					c.change(&newStatus)
				}
				old, cur := build(ready(), oldMeta), build(newStatus, newMeta)
				if got := p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != c.want {
					t.Errorf("Update passes = %v; want %v", got, c.want)
				}
				if !p.Create(event.CreateEvent{Object: cur}) || !p.Delete(event.DeleteEvent{Object: cur}) || !p.Generic(event.GenericEvent{Object: cur}) {
					t.Errorf("creations, deletions and generic events must pass")
				}
			})
		}
	}

	t.Run("errors that print alike", func(t *testing.T) {
		a, b := ready(), ready()
		a.Processing.Errors = []string{"line 3: unknown signature set"}
		b.Processing.Errors = []string{"line 3:", "unknown signature set"}
		if !p.Update(event.UpdateEvent{ObjectOld: &appprotectv1.APPolicy{Status: a}, ObjectNew: &appprotectv1.APPolicy{Status: b}}) {
			t.Errorf("a change of errors that prints alike did not pass")
		}
	})
	t.Run("not a PLM object", func(t *testing.T) {
		s := &corev1.Secret{}
		if !p.Update(event.UpdateEvent{ObjectOld: s, ObjectNew: s.DeepCopy()}) {
			t.Errorf("an update of another kind did not pass")
		}
	})
}
