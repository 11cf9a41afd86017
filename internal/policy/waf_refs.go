package policy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/graph"
)

// PLM kinds a WAFGatewayBindingPolicy refers to.
const (
	KindAPPolicy  = "APPolicy"
	KindAPLogConf = "APLogConf"
)

// BundleRef is one PLM bundle a policy references: the object and the bundle
// its status describes.
type BundleRef struct {
	Kind     string
	Object   types.NamespacedName
	Location string
	Sha256   string
	// Revision is the status.processing.datetime of the PLM status that
	// reports the bundle ("" when it has none, or for a bundle known from a
	// policy's own status): PLM processing the object again lets the fetcher
	// retry a bundle that failed verification at the same location.
	Revision string
}

// refError is why a reference does not resolve, with its ResolvedRefs reason.
type refError struct {
	reason string
	msg    string
}

// resolvePLM resolves a policy's reference to an APPolicy or APLogConf and
// the bundle its status describes.
func resolvePLM(in *graph.Input, p *v1alpha1.WAFGatewayBindingPolicy, kind string, ref v1alpha1.PLMObjectReference) (BundleRef, *refError) {
	ns := p.Namespace
	if ref.Namespace != nil {
		ns = *ref.Namespace
	}
	key := types.NamespacedName{Namespace: ns, Name: ref.Name}
	out := BundleRef{Kind: kind, Object: key}
	if in.PLMGroup == "" {
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf("%s %s cannot be resolved: no PLM %s CRD is installed", kind, key, kind)}
	}
	if !in.ReferenceAllowed(v1alpha1.GroupVersion.Group, "WAFGatewayBindingPolicy", p.Namespace, in.PLMGroup, kind, ns, ref.Name) {
		return out, &refError{v1alpha1.WAFReasonRefNotPermitted, fmt.Sprintf(
			"%s %s is in another namespace and no ReferenceGrant in %s allows WAFGatewayBindingPolicies from %s to refer to %s.%s",
			kind, key, ns, p.Namespace, kind, in.PLMGroup)}
	}
	objects := in.APPolicies
	if kind == KindAPLogConf {
		objects = in.APLogConfs
	}
	st, ok := objects[key]
	if !ok {
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf("%s %s not found", kind, key)}
	}
	if st == nil || st.Bundle == nil || st.Bundle.State == "" {
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf("%s %s has no compiled bundle yet (PLM has not reported one)", kind, key)}
	}
	b := st.Bundle
	switch b.State {
	case plm.BundleStateReady:
	case plm.BundleStateInvalid:
		errs := "no errors reported"
		if st.Processing != nil && len(st.Processing.Errors) > 0 {
			errs = strings.Join(st.Processing.Errors, "; ")
		}
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf("%s %s failed to compile: %s", kind, key, errs)}
	default:
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf("%s %s is not compiled yet (bundle state %s)", kind, key, b.State)}
	}
	if b.Location == "" || b.Sha256 == "" {
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf("%s %s is ready but its status has no bundle location or sha256", kind, key)}
	}
	out.Location, out.Sha256 = b.Location, strings.ToLower(b.Sha256)
	if st.Processing != nil {
		out.Revision = st.Processing.Datetime
	}
	return out, nil
}

// WantedBundles returns every bundle the WAF policies need: the bundles PLM
// currently reports for their references, and the bundles in force (in the
// policies' own status), which stay needed until replaced. in must hold every
// ReferenceGrant: without them the bundles of objects in other namespaces
// look unwanted, and a fetcher told so forgets their failures.
func WantedBundles(in *graph.Input) []BundleRef {
	seen := map[string]bool{}
	var out []BundleRef
	add := func(r BundleRef) {
		k := r.Sha256 + " " + r.Location + " " + r.Revision
		if r.Sha256 == "" || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, r)
	}
	for _, p := range in.WAFPolicies {
		if r, err := resolvePLM(in, p, KindAPPolicy, p.Spec.APPolicySource); err == nil {
			add(r)
		}
		for _, l := range p.Spec.SecurityLogs {
			if r, err := resolvePLM(in, p, KindAPLogConf, l.APLogConfSource); err == nil {
				add(r)
			}
		}
		if s := p.Status.APPolicyStatus; s != nil {
			add(BundleRef{Kind: KindAPPolicy, Location: s.Bundle.Location, Sha256: s.Bundle.Sha256})
		}
		for _, s := range p.Status.APLogConfStatus {
			add(BundleRef{Kind: KindAPLogConf, Location: s.Bundle.Location, Sha256: s.Bundle.Sha256})
		}
	}
	return out
}
