package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

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
	// Pinned are NGINX's page-dependent defaults written out at http level
	// (see pinnedDefaults); no policy sets them.
	Pinned []string
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
// Conflicts are decided across every policy of the snapshot, so every
// Gateway agrees on them.
//
// A policy has one outcome per Gateway, but it may target the Gateway and
// several of its routes. On each of those targets it is rendered, rendered
// in part (some fields have no effect there), or refused (NGINX would reject
// the effective settings there, so nothing of it is rendered there). A
// refusal on one target never takes the policy off its other targets, and
// the outcome says what happened on each (see verdict.outcome):
//
//   - refused on every target it has on this Gateway: Accepted=False,
//     reason Invalid, with each target's reason; nothing of it is rendered;
//   - otherwise Accepted=True (it is attached and in effect), and when some
//     target refuses it or ignores some of its fields, Programmed=False with
//     reason PartiallyInvalid, naming each such target and why.
//
// This matches GEP-713 (Accepted: the policy is attached and in effect) and
// the proposal (PartiallyInvalid: not fully programmed), and a policy with
// a single target reads as it always did.
func EvaluateProxySettings(g *graph.Gateway, in *graph.Input) *ProxySettings {
	res := &ProxySettings{Outcomes: map[types.NamespacedName]*Outcome{}, Routes: map[TargetRef][]string{}, Affected: map[TargetRef]bool{}}
	states := pspStates(in)
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
	verdicts := map[*pspState]*verdict{}
	// attach records that the policies apply to one more target here.
	attach := func(ss []*pspState) {
		for _, s := range ss {
			if verdicts[s] == nil {
				verdicts[s] = &verdict{}
			}
			if s.rejected == nil {
				verdicts[s].targets++
			}
		}
	}
	report := func(ss []*pspState, i *targetIssue) {
		if i == nil {
			return
		}
		for _, s := range ss {
			verdicts[s].issues = append(verdicts[s].issues, *i)
		}
	}

	// The Gateway's policies render at http level; alone, under NGINX's defaults, NGINX must accept them.
	attach(on(gwRef))
	gwPolicies := accepted(on(gwRef))
	gw := merged(gwPolicies)
	if err := CheckProxy(gw, Buffering{}); err != nil {
		report(gwPolicies, &targetIssue{target: gwRef, refused: true, msg: fmt.Sprintf(
			"NGINX would reject the proxy settings of Gateway %s (ProxySettingsPolicy %s on the Gateway, and NGINX's defaults): %s",
			g.Key, policyNames(gwPolicies), err)})
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
		attach(on(ref))
		rp := accepted(on(ref))
		if len(rp) == 0 {
			continue
		}
		dirs, issue := routeSettings(routeTarget{ref: ref, route: routes[ref], policies: rp}, gw, gwPolicies, g.Key)
		report(rp, issue)
		if len(dirs) > 0 {
			res.Routes[ref] = dirs
			res.Affected[ref] = true
		}
	}

	for _, ref := range unattachedRoutes(g) {
		ss := on(ref)
		attach(ss)
		report(accepted(ss), &targetIssue{target: ref, refused: true, notAttached: true, msg: notAttachedMessage(ref, g)})
	}

	res.Pinned = pinnedDefaults(gw, res)

	for s, v := range verdicts {
		k := types.NamespacedName{Namespace: s.policy.Namespace, Name: s.policy.Name}
		o := &Outcome{Policy: k, Generation: s.policy.Generation}
		if s.rejected != nil {
			o.Accepted = *s.rejected
		} else {
			o.Accepted, o.Partial = v.outcome()
		}
		if o.Accepted.Status == metav1.ConditionTrue && slices.Contains(s.targets, gwRef) {
			o.Accepted.Message += outsideTLSListeners(g, "apply to")
		}
		res.Outcomes[k] = o
	}
	return res
}

// routeTarget is a route with the accepted policies that target it.
type routeTarget struct {
	ref      TargetRef
	route    *graph.Route
	policies []*pspState
}

// routeSettings returns the directives of a route's own policies for every
// location of the route, and what keeps them from applying in full. How a
// rule is proxied decides what has an effect: rules whose backends speak
// h2c (every GRPCRoute rule, and HTTPRoute rules with kubernetes.io/h2c
// backends) use grpc_pass, whose only buffering setting is
// grpc_buffer_size; the others use proxy_pass.
func routeSettings(rt routeTarget, gw Buffering, gwPolicies []*pspState, gwKey types.NamespacedName) ([]string, *targetIssue) {
	local := merged(rt.policies)
	grpcRules, proxyRules := rulesByPass(rt.route)
	if rt.ref.Kind == graph.KindGRPCRoute || (len(grpcRules) > 0 && len(proxyRules) == 0) {
		if err := checkGRPC(local); err != nil {
			return nil, &targetIssue{target: rt.ref, refused: true, msg: fmt.Sprintf("the proxy settings of %s (ProxySettingsPolicy %s on the route) cannot be configured: %s",
				rt.ref, policyNames(rt.policies), err)}
		}
		var issue *targetIssue
		if moot := grpcIneffective(local); moot != "" {
			msg := fmt.Sprintf("%s cannot apply to %s: it is proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize)", moot, rt.ref)
			if rt.ref.Kind != graph.KindGRPCRoute {
				msg = fmt.Sprintf("%s cannot apply to %s: its backends speak h2c, so it is proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize)", moot, rt.ref)
			}
			issue = &targetIssue{target: rt.ref, msg: msg}
		}
		return grpcDirectives(local), issue
	}
	if gw.Disable != nil && *gw.Disable && local.Disable == nil && local.sizesSet() {
		// The sizes are moot: nothing of the route's policies is rendered.
		return nil, &targetIssue{target: rt.ref, disabled: true, msg: PartiallyInvalidDisabledMessage}
	}
	if err := CheckProxy(local, gw); err != nil {
		from := "ProxySettingsPolicy " + policyNames(rt.policies) + " on the route"
		if len(gwPolicies) > 0 {
			from += ", " + policyNames(gwPolicies) + " on Gateway " + gwKey.String()
		}
		return nil, &targetIssue{target: rt.ref, refused: true,
			msg: fmt.Sprintf("NGINX would reject the effective proxy settings of %s (%s, and NGINX's defaults): %s", rt.ref, from, err)}
	}
	dirs := proxyDirectives(local)
	if len(grpcRules) == 0 {
		return dirs, nil
	}
	// Each directive is ignored where its pass is not used, so the route's
	// locations can share one include file.
	dirs = append(dirs, grpcDirectives(local)...)
	if moot := grpcIneffective(local); moot != "" {
		return dirs, &targetIssue{target: rt.ref, msg: fmt.Sprintf(
			"%s cannot apply to %s of %s: their backends speak h2c, so they are proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize); its other rules get every field",
			moot, ruleList(grpcRules), rt.ref)}
	}
	return dirs, nil
}

// rulesByPass splits a route's configured rules (by index) into those
// proxied with grpc_pass and those proxied with proxy_pass.
func rulesByPass(r *graph.Route) (grpc, proxy []int) {
	for _, rule := range r.ValidRules() {
		if rule.H2C {
			grpc = append(grpc, rule.Index)
		} else {
			proxy = append(proxy, rule.Index)
		}
	}
	return grpc, proxy
}

func ruleList(idx []int) string {
	s := make([]string, 0, len(idx))
	for _, i := range idx {
		s = append(s, fmt.Sprintf("rules[%d]", i))
	}
	return strings.Join(s, ", ")
}

// pspStates validates every policy and decides conflicts: on each target, a
// field belongs to the oldest valid policy that sets it; a policy that sets a
// field another, older one already sets on a shared target is Conflicted.
func pspStates(in *graph.Input) []*pspState {
	claimed := map[TargetRef]map[string]*v1alpha1.ProxySettingsPolicy{}
	var states []*pspState
	for _, p := range sortPolicies(values(in.ProxySettingsPolicies)) {
		s := &pspState{policy: p, targets: TargetsOf(p, p.Spec.TargetRefs)}
		states = append(states, s)
		if s.rejected = unreadable(in, "ProxySettingsPolicy", p); s.rejected != nil {
			continue
		}
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
	inc.AddHTTP(config.IncludesDir+IncludeKind+".conf", append(append([]string(nil), p.HTTP...), p.Pinned...))
	for ref, dirs := range p.Routes {
		rk := config.RouteKey{Kind: ref.Kind, Key: ref.Key}
		inc.AddRoute(rk, config.RouteIncludePath(IncludeKind, rk), dirs)
	}
}
