package graph

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// TestWAFStatusCountsByWhatTranslationReads: a WAFGatewayBindingPolicy's
// records of the bundles in force are read by translation, its conditions
// are not: a conditions write (a data plane's report made Programmed true)
// changes neither the policy's version nor the fingerprint, a new record
// changes both. Another kind's status counts for nothing.
func TestWAFStatusCountsByWhatTranslationReads(t *testing.T) {
	waf := func(rv, sha string, programmed metav1.ConditionStatus) *v1alpha1.WAFGatewayBindingPolicy {
		p := &v1alpha1.WAFGatewayBindingPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "waf", UID: "u", Generation: 2, ResourceVersion: rv}}
		p.Status.Ancestors = []gatewayv1.PolicyAncestorStatus{{Conditions: []metav1.Condition{{Type: "Programmed", Status: programmed}}}}
		if sha != "" {
			p.Status.APPolicyStatus = &v1alpha1.BundleReferenceStatus{Name: "ap", Namespace: "apps", Bundle: v1alpha1.BundleSummary{Sha256: sha}}
		}
		return p
	}
	version := func(p *v1alpha1.WAFGatewayBindingPolicy) (string, [32]byte) {
		in := NewInput("ctrl")
		in.Add(p)
		fp, ok := in.Fingerprint()
		if !ok {
			t.Fatal("no fingerprint")
		}
		return in.PolicyVersions()[ObjectRef{Kind: "WAFGatewayBindingPolicy", Key: key("apps", "waf")}], fp
	}
	v1, fp1 := version(waf("1", "aa", metav1.ConditionFalse))
	if v1 == "" {
		t.Fatal("the policy has no version")
	}
	if v2, fp2 := version(waf("2", "aa", metav1.ConditionTrue)); v2 != v1 || fp2 != fp1 {
		t.Error("a conditions write changed the policy's version or the fingerprint")
	}
	if v3, fp3 := version(waf("3", "bb", metav1.ConditionTrue)); v3 == v1 || fp3 == fp1 {
		t.Error("a new bundle record changed neither the policy's version nor the fingerprint")
	}
	other := func(rv string) string {
		p := &v1alpha1.ClientSettingsPolicy{ObjectMeta: metav1.ObjectMeta{UID: "u", Generation: 1, ResourceVersion: rv}}
		return PolicyVersion("ClientSettingsPolicy", p)
	}
	if other("1") != other("2") {
		t.Error("a ClientSettingsPolicy's status write changed its version")
	}
}
