package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// Messages of SnippetsFilter's and SnippetsPolicy's rules, identical to
// the CRDs' CEL messages (NGINX Gateway Fabric's).
const (
	MsgSnippetContextUnique   = "Only one snippet allowed per context"
	MsgSnippetsTargetKind     = "TargetRef Kind must be: Gateway"
	MsgSnippetsTargetNameUniq = "TargetRef Name must be unique"
	MsgSnippetsTargetGroup    = "TargetRef Group must be gateway.networking.k8s.io"
)

// Limits of the snippets' CRDs.
const (
	// MaxSnippets is the most snippets an object holds: one per context.
	MaxSnippets = 4
	// MaxSnippetLength is the CRDs' maxLength of a snippet's value
	// (NGINX Gateway Fabric sets none): it bounds the work of reading it
	// and the size of the files it is written to.
	MaxSnippetLength = 16384
)

// SnippetContexts are the contexts a snippet may name, in the CRDs' order.
var SnippetContexts = []string{
	string(v1alpha1.NginxContextMain), string(v1alpha1.NginxContextHTTP),
	string(v1alpha1.NginxContextHTTPServer), string(v1alpha1.NginxContextHTTPServerLocation),
}

// SnippetsFilter re-checks a SnippetsFilter's CRD rules: 1 to 4 snippets,
// each of a known context, once, with a value of 1 to 16,384 bytes.
// Whether the values are allowed is package snippets' to say.
func SnippetsFilter(f *v1alpha1.SnippetsFilter) field.ErrorList {
	path := field.NewPath("spec", "snippets")
	var errs field.ErrorList
	if len(f.Spec.Snippets) == 0 {
		errs = append(errs, field.Invalid(path, len(f.Spec.Snippets), "should have at least 1 items"))
	}
	return append(errs, snippetList(path, f.Spec.Snippets)...)
}

// SnippetsPolicy re-checks a SnippetsPolicy's CRD rules: 1 to 16 targets,
// Gateways of group gateway.networking.k8s.io, each name once; at most 4
// snippets, as SnippetsFilter's.
func SnippetsPolicy(p *v1alpha1.SnippetsPolicy) field.ErrorList {
	errs := targetRefList(field.NewPath("spec", "targetRefs"), p.Spec.TargetRefs, targetRules{
		kind:  func(r gatewayv1.LocalPolicyTargetReference) bool { return r.Kind == v1alpha1.KindGateway },
		group: func(r gatewayv1.LocalPolicyTargetReference) bool { return r.Group == v1alpha1.TargetGroup },
		key:   func(r gatewayv1.LocalPolicyTargetReference) string { return string(r.Name) },
		msgs:  [3]string{MsgSnippetsTargetKind, MsgSnippetsTargetGroup, MsgSnippetsTargetNameUniq},
	})
	return append(errs, snippetList(field.NewPath("spec", "snippets"), p.Spec.Snippets)...)
}

// snippetList checks at most 4 snippets, each of a known context, once,
// with a value of 1 to 16,384 bytes.
func snippetList(path *field.Path, snippets []v1alpha1.Snippet) field.ErrorList {
	var errs field.ErrorList
	if len(snippets) > MaxSnippets {
		errs = append(errs, field.TooMany(path, len(snippets), MaxSnippets))
	}
	seen := map[v1alpha1.NginxContext]bool{}
	unique := true
	for i, s := range snippets {
		errs = append(errs, enum(path.Index(i).Child("context"), string(s.Context), SnippetContexts...)...)
		errs = append(errs, stringField(path.Index(i).Child("value"), s.Value, 1, MaxSnippetLength, nil)...)
		unique = unique && !seen[s.Context]
		seen[s.Context] = true
	}
	if !unique {
		errs = append(errs, field.Invalid(path, "array", MsgSnippetContextUnique))
	}
	return errs
}
