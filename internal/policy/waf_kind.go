package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=wafgatewaybindingpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=wafgatewaybindingpolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=appprotect.f5.com;waf.f5.com,resources=appolicies;aplogconfs,verbs=get;list;watch

// wafKind is WAFGatewayBindingPolicy: a direct policy on Gateways and
// routes that protects them with App Protect bundles compiled by PLM. Its
// status also holds the bundles in force (SetOwnStatus).
var wafKind Kind = wafPolicies{"WAFGatewayBindingPolicy"}

type wafPolicies struct{ gatewallKind }

func (wafPolicies) AffectedType() string       { return v1alpha1.WAFGatewayBindingPolicyAffected }
func (wafPolicies) NewObject() client.Object   { return &v1alpha1.WAFGatewayBindingPolicy{} }
func (wafPolicies) NewList() client.ObjectList { return &v1alpha1.WAFGatewayBindingPolicyList{} }
func (wafPolicies) Targets() TargetKinds       { return GatewayAPITargets }
func (wafPolicies) TargetsField() string       { return "targetRefs" }

// Reads: whether WAF is enabled (NginxProxy), references to APPolicies and
// APLogConfs in other namespaces (ReferenceGrant), and what PLM compiled.
func (wafPolicies) Reads() []string {
	return []string{"NginxProxy", "ReferenceGrant", KindAPPolicy, KindAPLogConf}
}

func (wafPolicies) Validate(p v1alpha1.Policy) error {
	return validation.WAFGatewayBindingPolicy(p.(*v1alpha1.WAFGatewayBindingPolicy)).ToAggregate()
}

func (wafPolicies) Evaluate(g *Gateway, in *graph.Input) Attachment { return EvaluateWAF(g, in) }

// SetOwnStatus sets apPolicyStatus and apLogConfStatus: the bundles in
// force on the Gateways given, or what PLM reports (bundleStatuses).
func (wafPolicies) SetOwnStatus(p v1alpha1.PolicyWithStatus, gateways []Attachment, in *graph.Input, now metav1.Time) {
	w := p.(*v1alpha1.WAFGatewayBindingPolicy)
	var inForce []*WAF
	for _, a := range gateways {
		if res, ok := a.(*WAF); ok {
			inForce = append(inForce, res)
		}
	}
	w.Status.APPolicyStatus, w.Status.APLogConfStatus = bundleStatuses(types.NamespacedName{Namespace: w.Namespace, Name: w.Name},
		inForce, in, w.Status, now)
}

// wafPoliciesIn are the snapshot's WAFGatewayBindingPolicies.
func wafPoliciesIn(in *graph.Input) []*v1alpha1.WAFGatewayBindingPolicy {
	out := make([]*v1alpha1.WAFGatewayBindingPolicy, 0, len(in.Policies[wafKind.Name()]))
	for _, p := range in.Policies[wafKind.Name()] {
		if w, ok := p.(*v1alpha1.WAFGatewayBindingPolicy); ok {
			out = append(out, w)
		}
	}
	return out
}

// PolicyOutcomes are the outcomes of the policies that have the Gateway as
// an ancestor.
func (w *WAF) PolicyOutcomes() map[types.NamespacedName]*Outcome { return w.Outcomes }

// HeldBack says why the Gateway's configuration must wait: each policy whose
// bundle in force on the data plane Gatewall does not have, sorted.
func (w *WAF) HeldBack() []string {
	var out []string
	for k, held := range w.Held {
		for _, h := range held {
			out = append(out, fmt.Sprintf("WAFGatewayBindingPolicy %s: %s", k, h))
		}
	}
	slices.Sort(out)
	return out
}

// ExplainRefusal says, when NGINX could not load the App Protect module,
// that the data-plane image has none and which image WAF needs: the pods
// stay on their bootstrap configuration, unready, and this is all a user
// sees of it.
func (w *WAF) ExplainRefusal(message string) string {
	if !w.Enabled || !strings.Contains(message, path.Base(w.Module)) || !strings.Contains(message, "dlopen()") {
		return ""
	}
	return "the data-plane image has no App Protect module (" + w.Module + "): WAF needs NGINX with F5's module, an image built from build/dataplane-waf/Dockerfile (docs/waf.md); " +
		"name it in the NginxProxy (kubernetes.deployment.container.image) or with the manager's --nginx-waf-image"
}

// Affects says whether a rendered policy protects a target.
func (w *WAF) Affects(ref graph.ObjectRef) bool { return w.Affected[ref] }
