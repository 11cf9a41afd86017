package policy

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/snippets"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=snippetspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=snippetspolicies/status,verbs=get;update;patch

// snippetsKind is SnippetsPolicy: NGINX configuration by hand on the
// Gateways it targets, held to package snippets' allow-list. The graph
// decides each policy's fate on a Gateway, because its snippets meet the
// rules' SnippetsFilters in the same locations (graph.GatewaySnippets);
// the kind reports it and adds the files: the http snippet at http level,
// the http.server snippet in every server of the Gateway, the
// http.server.location snippet in every location of its routes.
var snippetsKind Kind = snippetsPolicies{"SnippetsPolicy"}

type snippetsPolicies struct{ gatewallKind }

// GatewayTargets are the targets of policies on Gateways only.
var GatewayTargets = TargetKinds{Group: gatewayv1.GroupName, Kinds: []string{"Gateway"}, Text: "Gateways of group " + gatewayv1.GroupName}

// AffectedType is none: a Gateway's status holds at most 8 conditions
// (validation.MaxConditions), which its own four and the four other kinds
// that target Gateways take already (translate's
// TestConditionsFitTheAPIServer). The policy's own status says on which
// Gateways it is in effect.
func (snippetsPolicies) AffectedType() string { return "" }

func (snippetsPolicies) NewObject() client.Object   { return &v1alpha1.SnippetsPolicy{} }
func (snippetsPolicies) NewList() client.ObjectList { return &v1alpha1.SnippetsPolicyList{} }
func (snippetsPolicies) Targets() TargetKinds       { return GatewayTargets }
func (snippetsPolicies) TargetsField() string       { return "targetRefs" }
func (snippetsPolicies) Reads() []string            { return nil }

// Validate re-checks the CRD's rules and the snippets' allow-list.
func (snippetsPolicies) Validate(p v1alpha1.Policy) error {
	sp := p.(*v1alpha1.SnippetsPolicy)
	if errs := validation.SnippetsPolicy(sp); len(errs) > 0 {
		return errs.ToAggregate()
	}
	_, err := snippets.Check(snippets.GatewayScope, sp.Spec.Snippets)
	return err
}

// Evaluate reports the graph's decision on each SnippetsPolicy that
// targets the Gateway, and the files of those accepted.
func (snippetsPolicies) Evaluate(g *Gateway, _ *graph.Input) Attachment {
	a := &snippetsAttachment{outcomes: map[types.NamespacedName]*Outcome{}}
	if g.Snippets == nil {
		return a
	}
	for _, ps := range g.Snippets.Policies {
		p := ps.Policy
		k := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		o := &Outcome{Policy: k, Generation: p.Generation}
		a.outcomes[k] = o
		if ps.Refused != nil {
			o.Accepted = *ps.Refused
			continue
		}
		o.Accepted = conditions.True(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonAccepted),
			"Policy is accepted"+outsideTLSListeners(g.Gateway, "apply to"))
		for _, ctx := range snippetContexts {
			if !ps.Checked.Has(ctx) {
				continue
			}
			a.files = append(a.files, snippetFile{ctx: ctx, path: config.SnippetIncludePath(graph.KindSnippetsPolicy, k, ctx),
				directives: config.SnippetDirectives(graph.KindSnippetsPolicy, k, ps.Checked, ctx), origin: graph.KindSnippetsPolicy + " " + k.String()})
		}
	}
	return a
}

// snippetContexts are the contexts whose snippets are written (the main
// context holds none: package snippets allows it no directive).
var snippetContexts = []v1alpha1.NginxContext{
	v1alpha1.NginxContextHTTP, v1alpha1.NginxContextHTTPServer, v1alpha1.NginxContextHTTPServerLocation,
}

// snippetsAttachment is the SnippetsPolicies' attachment to one Gateway.
type snippetsAttachment struct {
	outcomes map[types.NamespacedName]*Outcome
	// files are the accepted policies' files, oldest policy first.
	files []snippetFile
}

// snippetFile is one policy's snippet for one context.
type snippetFile struct {
	ctx        v1alpha1.NginxContext
	path       string
	directives []config.Directive
	origin     string
}

func (a *snippetsAttachment) PolicyOutcomes() map[types.NamespacedName]*Outcome { return a.outcomes }

// Affects is false: the kind sets no Affected condition (AffectedType).
func (a *snippetsAttachment) Affects(graph.ObjectRef) bool { return false }

// AddIncludes adds each accepted policy's files where their contexts are.
func (a *snippetsAttachment) AddIncludes(inc *config.Includes) {
	for _, f := range a.files {
		switch f.ctx {
		case v1alpha1.NginxContextHTTP:
			inc.AddHTTP(f.path, f.directives)
		case v1alpha1.NginxContextHTTPServer:
			inc.AddServer(f.path, f.directives)
		case v1alpha1.NginxContextHTTPServerLocation:
			inc.AddLocation(f.path, f.directives)
		}
		inc.AddOrigin(f.path, f.origin)
	}
}
