package apicases

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// snippetsFilter is a SnippetsFilter with these snippets.
func snippetsFilter(snippets ...v1alpha1.Snippet) *v1alpha1.SnippetsFilter {
	return &v1alpha1.SnippetsFilter{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec:       v1alpha1.SnippetsFilterSpec{Snippets: snippets},
	}
}

// snippetsPolicy is a SnippetsPolicy on these targets with these snippets.
func snippetsPolicy(targets []gatewayv1.LocalPolicyTargetReference, snippets ...v1alpha1.Snippet) *v1alpha1.SnippetsPolicy {
	return &v1alpha1.SnippetsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec:       v1alpha1.SnippetsPolicySpec{TargetRefs: targets, Snippets: snippets},
	}
}

func snippet(ctx, value string) v1alpha1.Snippet {
	return v1alpha1.Snippet{Context: v1alpha1.NginxContext(ctx), Value: value}
}

// snippetsCases are NGINX Gateway Fabric's rules of both kinds (its
// examples accepted as they are), and the length Gatewall adds.
func snippetsCases() []Case {
	const (
		snippets = "spec.snippets"
		location = "http.server.location"
	)
	limitExcept := snippet(location, "limit_except GET {\n  deny all;\n}\n")
	every := []v1alpha1.Snippet{snippet("main", "# main"), snippet("http", "# http"), snippet("http.server", "# server"), snippet(location, "# location")}
	g := func(name string) gatewayv1.LocalPolicyTargetReference { return target("Gateway", name) }
	badGroup := g("gw")
	badGroup.Group = "example.com"
	return []Case{
		{Name: "SnippetsFilter: NGF's limit-except-sf", Object: snippetsFilter(limitExcept)},
		{Name: "SnippetsFilter: one snippet per context", Object: snippetsFilter(every...)},
		{Name: "SnippetsFilter: no snippets", Object: snippetsFilter([]v1alpha1.Snippet{}...), Field: snippets, Message: "should have at least 1 items"},
		{Name: "SnippetsFilter: five snippets", Object: snippetsFilter(append(every, limitExcept)...), Field: snippets, Message: "must have at most 4 items"},
		{Name: "SnippetsFilter: two location snippets", Object: snippetsFilter(limitExcept, snippet(location, "deny all;")),
			Field: snippets, Message: validation.MsgSnippetContextUnique},
		{Name: "SnippetsFilter: context stream", Object: snippetsFilter(snippet("stream", "# x")), Field: snippets + "[0].context", Message: `Unsupported value: "stream"`},
		{Name: "SnippetsFilter: context server (NGF's names only)", Object: snippetsFilter(snippet("server", "# x")), Field: snippets + "[0].context", Message: `Unsupported value: "server"`},
		{Name: "SnippetsFilter: empty value", Object: snippetsFilter(snippet(location, "")), Field: snippets + "[0].value", Message: "should be at least 1 chars long"},
		{Name: "SnippetsFilter: longest value", Object: snippetsFilter(snippet(location, strings.Repeat("#", validation.MaxSnippetLength)))},
		{Name: "SnippetsFilter: value too long", Object: snippetsFilter(snippet(location, strings.Repeat("#", validation.MaxSnippetLength+1))),
			Field: snippets + "[0].value", Message: "may not be more than 16384 bytes"},

		{Name: "SnippetsPolicy: NGF's limit-conn-sp", Object: snippetsPolicy(gatewayTarget(),
			snippet("http", "limit_conn_zone $binary_remote_addr zone=addr:10m;"), snippet(location, "limit_conn addr 1;"))},
		{Name: "SnippetsPolicy: no snippets", Object: snippetsPolicy(gatewayTarget())},
		{Name: "SnippetsPolicy: 16 Gateways", Object: snippetsPolicy(gatewayTargets(16), every...)},
		{Name: "SnippetsPolicy: 17 Gateways", Object: snippetsPolicy(gatewayTargets(17)), Field: "spec.targetRefs", Message: "must have at most 16 items"},
		{Name: "SnippetsPolicy: no targets", Object: snippetsPolicy([]gatewayv1.LocalPolicyTargetReference{}), Field: "spec.targetRefs", Message: "should have at least 1 items"},
		{Name: "SnippetsPolicy: an HTTPRoute target", Object: snippetsPolicy([]gatewayv1.LocalPolicyTargetReference{target("HTTPRoute", "r")}),
			Field: "spec.targetRefs", Message: validation.MsgSnippetsTargetKind},
		{Name: "SnippetsPolicy: wrong group", Object: snippetsPolicy([]gatewayv1.LocalPolicyTargetReference{badGroup}),
			Field: "spec.targetRefs", Message: validation.MsgSnippetsTargetGroup},
		{Name: "SnippetsPolicy: a Gateway twice", Object: snippetsPolicy([]gatewayv1.LocalPolicyTargetReference{g("gw"), g("gw")}),
			Field: "spec.targetRefs", Message: validation.MsgSnippetsTargetNameUniq},
		{Name: "SnippetsPolicy: five snippets", Object: snippetsPolicy(gatewayTarget(), append(every, limitExcept)...), Field: snippets, Message: "must have at most 4 items"},
		{Name: "SnippetsPolicy: two http snippets", Object: snippetsPolicy(gatewayTarget(), snippet("http", "# a"), snippet("http", "# b")),
			Field: snippets, Message: validation.MsgSnippetContextUnique},
		{Name: "SnippetsPolicy: context events", Object: snippetsPolicy(gatewayTarget(), snippet("events", "# x")), Field: snippets + "[0].context", Message: `Unsupported value: "events"`},
		{Name: "SnippetsPolicy: empty value", Object: snippetsPolicy(gatewayTarget(), snippet("http", "")), Field: snippets + "[0].value", Message: "should be at least 1 chars long"},
	}
}

// gatewayTargets are n Gateway targets.
func gatewayTargets(n int) []gatewayv1.LocalPolicyTargetReference {
	refs := make([]gatewayv1.LocalPolicyTargetReference, n)
	for i := range refs {
		refs[i] = target("Gateway", "gw-"+string(rune('a'+i)))
	}
	return refs
}
