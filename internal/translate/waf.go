package translate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
)

// WAFStatus returns a WAFGatewayBindingPolicy's status: its ancestors, and
// apPolicyStatus/apLogConfStatus describing the bundles in force (with
// lastFetched). While nothing is in force they mirror what PLM reports,
// without lastFetched. A bundle recorded as in force stays recorded until
// another replaces it, so it survives restarts and failed updates.
func WAFStatus(k types.NamespacedName, ancestors []status.Ancestor, translations []*Translation, in *graph.Input,
	old v1alpha1.WAFGatewayBindingPolicyStatus, now metav1.Time) v1alpha1.WAFGatewayBindingPolicyStatus {
	st := v1alpha1.WAFGatewayBindingPolicyStatus{
		PolicyStatus:    status.PolicyStatus(ancestors, in.ControllerName, old.PolicyStatus, now),
		APPolicyStatus:  old.APPolicyStatus,
		APLogConfStatus: old.APLogConfStatus,
	}
	p := in.WAFPolicies[k]
	for _, t := range translations {
		f, ok := t.WAF.InForce[k]
		if !ok {
			continue
		}
		st.APPolicyStatus = inForce(in, f.Policy, f.FetchedAt, now)
		st.APLogConfStatus = nil
		for _, l := range f.Logs {
			st.APLogConfStatus = append(st.APLogConfStatus, *inForce(in, l, f.FetchedAt, now))
		}
		return st
	}
	if p != nil && st.APPolicyStatus == nil {
		st.APPolicyStatus = reported(in, p, policy.KindAPPolicy, p.Spec.APPolicySource)
	}
	return st
}

func inForce(in *graph.Input, r policy.BundleRef, fetched map[string]metav1.Time, now metav1.Time) *v1alpha1.BundleReferenceStatus {
	at := fetched[r.Sha256]
	if at.IsZero() {
		at = now
	}
	return &v1alpha1.BundleReferenceStatus{
		Name: r.Object.Name, Namespace: r.Object.Namespace,
		Bundle:      v1alpha1.BundleSummary{State: plmState(in, r), Location: r.Location, Sha256: r.Sha256},
		LastFetched: &at,
	}
}

// reported mirrors what PLM says of a reference, nothing being in force.
func reported(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, kind string, ref v1alpha1.PLMObjectReference) *v1alpha1.BundleReferenceStatus {
	ns := p.Namespace
	if ref.Namespace != nil {
		ns = *ref.Namespace
	}
	r := policy.BundleRef{Kind: kind, Object: types.NamespacedName{Namespace: ns, Name: ref.Name}}
	out := &v1alpha1.BundleReferenceStatus{Name: ref.Name, Namespace: ns}
	if st := in.APPolicies[r.Object]; st != nil && st.Bundle != nil {
		out.Bundle = v1alpha1.BundleSummary{State: st.Bundle.State, Location: st.Bundle.Location, Sha256: st.Bundle.Sha256}
	}
	return out
}

// plmState is the state PLM reports for the object a bundle came from, when
// that is still the bundle it reports; "ready" for a bundle kept in force.
func plmState(in *graph.Input, r policy.BundleRef) string {
	objects := in.APPolicies
	if r.Kind == policy.KindAPLogConf {
		objects = in.APLogConfs
	}
	if st := objects[r.Object]; st != nil && st.Bundle != nil && st.Bundle.Sha256 == r.Sha256 {
		return st.Bundle.State
	}
	return "ready"
}
