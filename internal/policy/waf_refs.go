package policy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	apiplm "github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/conditions"
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

// refError is why a reference does not resolve, with its ResolvedRefs
// reason and what the problem means for the bundle in force.
type refError struct {
	reason  string
	msg     string
	problem refProblem
}

// refProblem classifies an unresolved reference; it decides whether the
// bundle in force stays and the Programmed reason.
type refProblem int

const (
	// refGone: the object does not exist or may not be referred to; nothing
	// of it may stay in force.
	refGone refProblem = iota
	// refNotReady: PLM has not (yet) reported a usable bundle; Pending.
	refNotReady
	// refInvalid: PLM reports a bundle that cannot be used (it failed to
	// compile, or its sha256 or location is malformed); Invalid.
	refInvalid
)

// programmedReason is the Programmed reason of an unresolved reference
// that leaves the policy (or a part of it) unprogrammed.
func (p refProblem) programmedReason() string {
	if p == refInvalid {
		return string(gatewayv1.PolicyReasonInvalid)
	}
	return v1alpha1.PolicyReasonPending
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
	invalidRef := func(problem refProblem, format string, args ...any) (BundleRef, *refError) {
		return out, &refError{v1alpha1.WAFReasonInvalidRef, fmt.Sprintf(format, args...), problem}
	}
	if in.PLMGroup == "" {
		return invalidRef(refNotReady, "%s %s cannot be resolved: no PLM %s CRD is installed; install PLM (or its APPolicy and APLogConf CRDs): Gatewall uses them as soon as they are, without a restart", kind, key, kind)
	}
	if !in.ReferenceAllowed(v1alpha1.GroupVersion.Group, "WAFGatewayBindingPolicy", p.Namespace, in.PLMGroup, kind, ns, ref.Name) {
		return out, &refError{v1alpha1.WAFReasonRefNotPermitted, fmt.Sprintf(
			"%s %s is in another namespace and no ReferenceGrant in %s allows WAFGatewayBindingPolicies from %s to refer to %s.%s%s",
			kind, key, ns, p.Namespace, kind, in.PLMGroup, in.UnreadableGrants(ns)), refGone}
	}
	objects := in.APPolicies
	if kind == KindAPLogConf {
		objects = in.APLogConfs
	}
	st, ok := objects[key]
	if msg, unreadable := in.Unreadable(kind, key); unreadable {
		return invalidRef(refInvalid, "%s", msg) // what it reports cannot be trusted; what is in force stays
	}
	if !ok {
		return invalidRef(refGone, "%s %s not found", kind, key)
	}
	if st == nil || st.Bundle == nil || st.Bundle.State == "" {
		return invalidRef(refNotReady, "%s %s has no compiled bundle yet (PLM has not reported one)", kind, key)
	}
	b := st.Bundle
	switch b.State {
	case apiplm.BundleStateReady:
	case apiplm.BundleStateInvalid:
		errs := "no errors reported"
		if st.Processing != nil && len(st.Processing.Errors) > 0 {
			errs = strings.Join(st.Processing.Errors, "; ")
		}
		return invalidRef(refInvalid, "%s %s failed to compile: %s", kind, key, errs)
	default:
		return invalidRef(refNotReady, "%s %s is not compiled yet (bundle state %s)", kind, key, conditions.Quote(b.State))
	}
	if b.Location == "" || b.Sha256 == "" {
		return invalidRef(refNotReady, "%s %s is ready but its status has no bundle location or sha256", kind, key)
	}
	sha := strings.ToLower(b.Sha256)
	if err := checkBundle(in, b.Location, sha); err != nil {
		return invalidRef(refInvalid, "%s %s reports a bundle Gatewall cannot use: %v", kind, key, err)
	}
	out.Location, out.Sha256 = b.Location, sha
	if st.Processing != nil {
		out.Revision = st.Processing.Datetime
	}
	return out, nil
}

// checkBundle refuses a bundle whose sha256 or location is malformed, or
// whose location is outside the storage Gatewall may fetch from: the sha256
// names files on the data plane and in the fetcher's cache and is what the
// bundle is verified against; the location is where it is fetched from,
// with the manager's storage credentials. The message shows the value
// quoted and cut.
func checkBundle(in *graph.Input, location, sha string) error {
	if err := apiplm.ValidateSha256(sha); err != nil {
		return fmt.Errorf("sha256 %s: %w", conditions.Quote(sha), err)
	}
	if err := in.PLMScope.Admits(location); err != nil {
		return fmt.Errorf("location %s: %w", conditions.Quote(location), err)
	}
	return nil
}

// ReportedBundle is what a policy's status mirrors of a bundle PLM reports:
// its state, location and sha256 when each is well-formed. A malformed value
// is left out (the policy's conditions say what is wrong with it), so a
// status never carries another controller's bad value, whatever its size.
func ReportedBundle(b *apiplm.Bundle) v1alpha1.BundleSummary {
	var out v1alpha1.BundleSummary
	switch b.State {
	case apiplm.BundleStatePending, apiplm.BundleStateProcessing, apiplm.BundleStateReady, apiplm.BundleStateInvalid:
		out.State = b.State
	}
	if _, _, err := apiplm.ParseLocation(b.Location); err == nil {
		out.Location = b.Location
	}
	if sha := strings.ToLower(b.Sha256); apiplm.ValidateSha256(sha) == nil {
		out.Sha256 = sha
	}
	return out
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
	for _, p := range wafPoliciesIn(in) {
		if r, err := resolvePLM(in, p, KindAPPolicy, p.Spec.APPolicySource); err == nil {
			add(r)
		}
		for _, l := range p.Spec.SecurityLogs {
			if r, err := resolvePLM(in, p, KindAPLogConf, l.APLogConfSource); err == nil {
				add(r)
			}
		}
		// A record the policy's status holds is Gatewall's own, but anyone
		// allowed to write the status can change it: it is wanted only if valid.
		if s := p.Status.APPolicyStatus; s != nil && checkBundle(in, s.Bundle.Location, s.Bundle.Sha256) == nil {
			add(BundleRef{Kind: KindAPPolicy, Location: s.Bundle.Location, Sha256: s.Bundle.Sha256})
		}
		for _, s := range p.Status.APLogConfStatus {
			if checkBundle(in, s.Bundle.Location, s.Bundle.Sha256) == nil {
				add(BundleRef{Kind: KindAPLogConf, Location: s.Bundle.Location, Sha256: s.Bundle.Sha256})
			}
		}
	}
	return out
}
