package policy

import (
	"cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	apiplm "github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/graph"
)

// bundleStatuses returns a WAFGatewayBindingPolicy's apPolicyStatus and
// apLogConfStatus: the bundles in force (with lastFetched) on the
// Gateways given. apLogConfStatus lists each referenced APLogConf once, in
// the order of spec.securityLogs. While nothing of an object is in force it
// mirrors what PLM reports, without lastFetched. A bundle recorded as in
// force stays recorded until another replaces it, so it survives restarts
// and failed updates; a record of an object the policy no longer refers to
// goes as soon as nothing of the policy is in force. old is the status
// written last.
func bundleStatuses(k types.NamespacedName, gateways []*WAF, in *graph.Input,
	old v1alpha1.WAFGatewayBindingPolicyStatus, now metav1.Time) (*v1alpha1.BundleReferenceStatus, []v1alpha1.BundleReferenceStatus) {
	p, _ := in.Policies[wafKind.Name()][k].(*v1alpha1.WAFGatewayBindingPolicy)
	if _, unreadable := in.Unreadable("WAFGatewayBindingPolicy", k); p == nil || unreadable {
		return old.APPolicyStatus, old.APLogConfStatus // an unreadable policy's stub names no bundles
	}
	for _, w := range gateways {
		if len(w.Held[k]) > 0 {
			// Its bundles in force are missing here, not replaced: the
			// records stay, so the next manager holds the Gateway back too.
			return old.APPolicyStatus, old.APLogConfStatus
		}
	}
	// A log profile not in force keeps its record, nothing having replaced
	// it, unless the record is malformed (anyone who can write the status
	// could have written it).
	oldLog := func(o types.NamespacedName) *v1alpha1.BundleReferenceStatus {
		for i := range old.APLogConfStatus {
			if r := &old.APLogConfStatus[i]; r.Name == o.Name && r.Namespace == o.Namespace && checkBundle(in, r.Bundle.Location, r.Bundle.Sha256) == nil {
				return r
			}
		}
		return nil
	}
	for _, w := range gateways {
		f, ok := w.InForce[k]
		if !ok {
			continue
		}
		logs := map[types.NamespacedName]*v1alpha1.BundleReferenceStatus{}
		for _, l := range f.Logs {
			logs[l.Object] = inForce(in, l, f.FetchedAt, now)
		}
		return inForce(in, f.Policy, f.FetchedAt, now),
			logStatuses(in, p, func(o types.NamespacedName) *v1alpha1.BundleReferenceStatus { return cmp.Or(logs[o], oldLog(o)) })
	}
	// Nothing is in force: keep the records of what the policy refers to.
	apPolicy, apPolicyRef := old.APPolicyStatus, plmRef(p, p.Spec.APPolicySource)
	if r := apPolicy; r == nil || r.Name != apPolicyRef.Name || r.Namespace != apPolicyRef.Namespace {
		apPolicy = reported(in, KindAPPolicy, apPolicyRef)
	}
	return apPolicy, logStatuses(in, p, oldLog)
}

// logStatuses lists each APLogConf the policy refers to once, in the order
// of spec.securityLogs: the record known gives, else what PLM reports.
func logStatuses(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, known func(types.NamespacedName) *v1alpha1.BundleReferenceStatus) []v1alpha1.BundleReferenceStatus {
	var out []v1alpha1.BundleReferenceStatus
	seen := map[types.NamespacedName]bool{}
	for _, l := range p.Spec.SecurityLogs {
		o := plmRef(p, l.APLogConfSource)
		if seen[o] {
			continue
		}
		seen[o] = true
		r := known(o)
		if r == nil {
			r = reported(in, KindAPLogConf, o)
		}
		out = append(out, *r)
	}
	return out
}

func plmRef(p *v1alpha1.WAFGatewayBindingPolicy, ref v1alpha1.PLMObjectReference) types.NamespacedName {
	ns := p.Namespace
	if ref.Namespace != nil {
		ns = *ref.Namespace
	}
	return types.NamespacedName{Namespace: ns, Name: ref.Name}
}

func inForce(in *graph.Input, r BundleRef, fetched map[string]metav1.Time, now metav1.Time) *v1alpha1.BundleReferenceStatus {
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

// reported mirrors what PLM says of an object, nothing of it being in force.
func reported(in *graph.Input, kind string, o types.NamespacedName) *v1alpha1.BundleReferenceStatus {
	objects := in.APPolicies
	if kind == KindAPLogConf {
		objects = in.APLogConfs
	}
	out := &v1alpha1.BundleReferenceStatus{Name: o.Name, Namespace: o.Namespace}
	if st := objects[o]; st != nil && st.Bundle != nil {
		out.Bundle = ReportedBundle(st.Bundle)
	}
	return out
}

// plmState is the state PLM reports for the object a bundle came from, when
// that is still the bundle it reports; "ready" for a bundle kept in force.
func plmState(in *graph.Input, r BundleRef) string {
	objects := in.APPolicies
	if r.Kind == KindAPLogConf {
		objects = in.APLogConfs
	}
	if st := objects[r.Object]; st != nil && st.Bundle != nil {
		if b := ReportedBundle(st.Bundle); b.Sha256 == r.Sha256 && b.State != "" {
			return b.State
		}
	}
	return apiplm.BundleStateReady
}
