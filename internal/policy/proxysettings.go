package policy

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// PartiallyInvalidDisabledMessage is the proposal's message for a route
// policy whose buffer sizes are moot under an inherited disable: true.
const PartiallyInvalidDisabledMessage = "Policy is not fully programmed: buffer size fields (bufferSize, buffers, busyBuffersSize) are ignored because buffering is disabled by an ancestor policy. Set disable to false to enable buffering and apply buffer size settings."

// Outcome is what one policy gets for one ancestor Gateway.
type Outcome struct {
	Policy     types.NamespacedName
	Generation int64
	// Accepted is the Accepted condition for this ancestor.
	Accepted metav1.Condition
	// Partial says which of the policy's fields do not take effect here;
	// "" when all do. It makes Programmed False with reason PartiallyInvalid.
	Partial string
	// ResolvedRefs, when set, is the policy's ResolvedRefs condition.
	ResolvedRefs *metav1.Condition
	// Blocked, when set, is why the policy's configuration cannot be
	// programmed whatever the data plane does (e.g. a bundle not fetched):
	// Programmed is False with it.
	Blocked *metav1.Condition
	// DeploymentReason is the Programmed reason when the data plane rejects
	// the configuration ("" for the Gateway API's Invalid).
	DeploymentReason string
}

// ProxySettings is the ProxySettingsPolicy attachment of one Gateway.
type ProxySettings struct {
	// Outcomes of the policies that have this Gateway as an ancestor.
	Outcomes map[types.NamespacedName]*Outcome
	// HTTP are the directives at http level (the Gateway's policies).
	HTTP []string
	// Routes are the directives for every location of a route (its own policies).
	Routes map[TargetRef][]string
	// Affected are the Gateway and routes the rendered settings change.
	Affected map[TargetRef]bool
}

// pspState is a policy's global verdict, the same for every Gateway.
type pspState struct {
	policy   *v1alpha1.ProxySettingsPolicy
	targets  []TargetRef
	settings Buffering
	rejected *metav1.Condition // Invalid or Conflicted
}

// EvaluateProxySettings attaches the ProxySettingsPolicies to one Gateway.
// all are every ProxySettingsPolicy that may matter (conflicts are decided
// across all of them, so every Gateway agrees on them).
func EvaluateProxySettings(g *graph.Gateway, all []*v1alpha1.ProxySettingsPolicy) *ProxySettings {
	res := &ProxySettings{Outcomes: map[types.NamespacedName]*Outcome{}, Routes: map[TargetRef][]string{}, Affected: map[TargetRef]bool{}}
	states := pspStates(all)
	gwRef := gatewayRef(g)
	routes := attachedRoutes(g)
	on := func(t TargetRef) []*pspState {
		var out []*pspState
		for _, s := range states {
			for _, st := range s.targets {
				if st == t {
					out = append(out, s)
					break
				}
			}
		}
		return out
	}
	outcome := func(s *pspState) *Outcome {
		k := types.NamespacedName{Namespace: s.policy.Namespace, Name: s.policy.Name}
		o := res.Outcomes[k]
		if o == nil {
			o = &Outcome{Policy: k, Generation: s.policy.Generation,
				Accepted: conditions.True(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonAccepted), "Policy is accepted")}
			if s.rejected != nil {
				o.Accepted = *s.rejected
			}
			res.Outcomes[k] = o
		}
		return o
	}
	refuse := func(ss []*pspState, msg string) {
		for _, s := range ss {
			o := outcome(s)
			if o.Accepted.Status == metav1.ConditionTrue {
				o.Accepted = conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), msg)
			}
		}
	}

	// The Gateway's policies render at http level; alone, under NGINX's defaults, NGINX must accept them.
	gwPolicies := accepted(on(gwRef))
	for _, s := range on(gwRef) {
		outcome(s)
	}
	gw := merged(gwPolicies)
	if err := CheckProxy(gw, Buffering{}); err != nil {
		refuse(gwPolicies, fmt.Sprintf("NGINX would reject the proxy settings of Gateway %s (ProxySettingsPolicy %s on the Gateway, and NGINX's defaults): %s",
			g.Key, policyNames(gwPolicies), err))
		gw, gwPolicies = Buffering{}, nil
	}
	res.HTTP = append(proxyDirectives(gw), grpcDirectives(gw)...)
	if len(gwPolicies) > 0 {
		res.Affected[gwRef] = true
	}

	refs := make([]TargetRef, 0, len(routes))
	for ref := range routes {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	for _, ref := range refs {
		if len(gwPolicies) > 0 {
			res.Affected[ref] = true // inherits the Gateway's settings
		}
		all := on(ref)
		for _, s := range all {
			outcome(s)
		}
		rp := accepted(all)
		if len(rp) == 0 {
			continue
		}
		local := merged(rp)
		if ref.Kind == graph.KindGRPCRoute {
			if moot := grpcIneffective(local); moot != "" {
				for _, s := range rp {
					outcome(s).Partial = fmt.Sprintf("%s cannot apply to GRPCRoute %s: it is proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize)", moot, ref.Key)
				}
			}
			res.Routes[ref] = grpcDirectives(local)
			res.Affected[ref] = true
			continue
		}
		if gw.Disable != nil && *gw.Disable && local.Disable == nil && local.sizesSet() {
			for _, s := range rp {
				outcome(s).Partial = PartiallyInvalidDisabledMessage
			}
			res.Affected[ref] = true
			continue // the sizes are moot: nothing of the route's policies is rendered
		}
		if err := CheckProxy(local, gw); err != nil {
			from := "ProxySettingsPolicy " + policyNames(rp) + " on the route"
			if len(gwPolicies) > 0 {
				from += ", " + policyNames(gwPolicies) + " on Gateway " + g.Key.String()
			}
			refuse(rp, fmt.Sprintf("NGINX would reject the effective proxy settings of %s (%s, and NGINX's defaults): %s", ref, from, err))
			continue
		}
		res.Routes[ref] = proxyDirectives(local)
		res.Affected[ref] = true
	}
	return res
}

// pspStates validates every policy and decides conflicts: on each target, a
// field belongs to the oldest valid policy that sets it; a policy that sets a
// field another, older one already sets on a shared target is Conflicted.
func pspStates(all []*v1alpha1.ProxySettingsPolicy) []*pspState {
	claimed := map[TargetRef]map[string]*v1alpha1.ProxySettingsPolicy{}
	var states []*pspState
	for _, p := range sortPolicies(all) {
		s := &pspState{policy: p, targets: TargetsOf(p, p.Spec.TargetRefs)}
		states = append(states, s)
		if errs := validation.ProxySettingsPolicy(p); len(errs) > 0 {
			c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), errs.ToAggregate().Error())
			s.rejected = &c
			continue
		}
		b, err := fromSpec(p.Spec.Buffering)
		if err != nil {
			c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), err.Error())
			s.rejected = &c
			continue
		}
		s.settings = b
		for _, t := range s.targets {
			for _, f := range b.fields() {
				if w := claimed[t][f]; w != nil {
					c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonConflicted),
						fmt.Sprintf("ProxySettingsPolicy %s/%s, which is older, already sets %s on %s", w.Namespace, w.Name, f, t))
					s.rejected = &c
					break
				}
			}
			if s.rejected != nil {
				break
			}
		}
		if s.rejected != nil {
			continue
		}
		for _, t := range s.targets {
			if claimed[t] == nil {
				claimed[t] = map[string]*v1alpha1.ProxySettingsPolicy{}
			}
			for _, f := range b.fields() {
				claimed[t][f] = p
			}
		}
	}
	return states
}

func accepted(ss []*pspState) []*pspState {
	var out []*pspState
	for _, s := range ss {
		if s.rejected == nil {
			out = append(out, s)
		}
	}
	return out
}

func merged(ss []*pspState) Buffering {
	var b Buffering
	for _, s := range ss {
		b = b.overlay(s.settings)
	}
	return b
}

func policyNames(ss []*pspState) string {
	keys := make([]types.NamespacedName, 0, len(ss))
	for _, s := range ss {
		keys = append(keys, types.NamespacedName{Namespace: s.policy.Namespace, Name: s.policy.Name})
	}
	return names(keys)
}

// IncludeKind names ProxySettingsPolicy's include files.
const IncludeKind = "proxy-settings"

// AddIncludes adds the rendered settings to a Gateway's configuration.
func (p *ProxySettings) AddIncludes(inc *config.Includes) {
	inc.AddHTTP(config.IncludesDir+IncludeKind+".conf", p.HTTP)
	for ref, dirs := range p.Routes {
		rk := config.RouteKey{Kind: ref.Kind, Key: ref.Key}
		inc.AddRoute(rk, config.RouteIncludePath(IncludeKind, rk), dirs)
	}
}
