package policy

import (
	"cmp"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// WAF is the WAFGatewayBindingPolicy attachment of one Gateway.
type WAF struct {
	// Enabled says whether the Gateway's effective NginxProxy enables WAF.
	Enabled bool
	// Module is the App Protect module's path.
	Module string
	// Outcomes of the policies that have this Gateway as an ancestor.
	Outcomes map[types.NamespacedName]*Outcome
	// InForce are the bundles each rendered policy uses.
	InForce map[types.NamespacedName]InForce
	// HTTP are the directives of the Gateway's policy (http level serves
	// every server of the Gateway).
	HTTP []config.Directive
	// Routes are the directives of each route's policy; they replace the
	// Gateway's entirely.
	Routes map[graph.ObjectRef][]config.Directive
	// Bundles are the bundle files to deliver, by sha256.
	Bundles map[string][]byte
	// Affected are the Gateway and routes a rendered policy protects.
	Affected map[graph.ObjectRef]bool
	// Held are the policies whose bundles in force Gatewall lacks, with
	// why: the Gateway's configuration must not be pushed (HeldBack).
	Held map[types.NamespacedName][]string
	// Protections say which policy, with which bundle, protects each
	// target in Affected (AffectedMessage).
	Protections map[graph.ObjectRef]Protection
}

// InForce are the bundles a rendered policy uses.
type InForce struct {
	Policy    BundleRef
	Logs      []BundleRef
	FetchedAt map[string]metav1.Time
}

type wafState struct {
	policy   *v1alpha1.WAFGatewayBindingPolicy
	targets  []graph.ObjectRef
	rejected *metav1.Condition
}

// EvaluateWAF attaches the WAFGatewayBindingPolicies to one Gateway.
func EvaluateWAF(g *Gateway, in *graph.Input) *WAF {
	res := &WAF{
		Enabled:  g.NginxProxy != nil && g.NginxProxy.WAF == v1alpha2.WAFEnabled,
		Module:   cmp.Or(in.WAFModule, WAFModule),
		Outcomes: map[types.NamespacedName]*Outcome{}, InForce: map[types.NamespacedName]InForce{},
		Routes: map[graph.ObjectRef][]config.Directive{}, Bundles: map[string][]byte{}, Affected: map[graph.ObjectRef]bool{},
		Held: map[types.NamespacedName][]string{}, Protections: map[graph.ObjectRef]Protection{},
	}
	states := wafStates(in)
	gwRef := gatewayRef(g)
	// The Gateway first: what a route policy that renders nothing leaves its
	// routes with is the Gateway's protection, inherited from http level.
	var gwPolicy *wafState
	var gwProtection *Protection
	for _, s := range states {
		if s.hasTarget(gwRef) {
			dirs, prot := res.evaluate(g, in, s, fmt.Sprintf("Gateway %s has no WAF protection", g.Key))
			if dirs != nil {
				res.HTTP, gwPolicy = dirs, s
			}
			if prot != nil {
				res.protect(gwRef, *prot)
				gwProtection = prot
			}
		}
	}
	if gwPolicy != nil {
		// The Gateway's protection is HTTP's: say what it leaves out.
		o := res.Outcomes[types.NamespacedName{Namespace: gwPolicy.policy.Namespace, Name: gwPolicy.policy.Name}]
		o.Accepted.Message += outsideTLSListeners(g.Gateway, "protect")
	}
	// A route policy that cannot render leaves its routes with the
	// Gateway's protection, if any: failing to fetch a route's own, stricter
	// bundle must not also drop the protection every route has.
	unrendered := "the routes it targets have no WAF protection"
	if gwPolicy != nil {
		unrendered = fmt.Sprintf("the routes it targets keep the protection of WAFGatewayBindingPolicy %s/%s on Gateway %s",
			gwPolicy.policy.Namespace, gwPolicy.policy.Name, g.Key)
	}
	for _, ref := range g.refs {
		for _, s := range states {
			if !s.hasTarget(ref) {
				continue
			}
			dirs, prot := res.evaluate(g, in, s, unrendered)
			if dirs != nil {
				res.Routes[ref] = dirs
			}
			if prot != nil {
				res.protect(ref, *prot)
			}
		}
		if _, own := res.Protections[ref]; !own && gwProtection != nil {
			inherited := *gwProtection
			inherited.From = &g.Key
			res.protect(ref, inherited)
		}
	}
	for _, ref := range g.unattached {
		for _, s := range states {
			if s.hasTarget(ref) {
				res.notAttached(g, s, ref)
			}
		}
	}
	return res
}

// notAttached records that a policy targets a route not attached to the
// Gateway: TargetNotFound when that is all it targets here, else a part of
// it that is not programmed.
func (res *WAF) notAttached(g *Gateway, s *wafState, ref graph.ObjectRef) {
	key := types.NamespacedName{Namespace: s.policy.Namespace, Name: s.policy.Name}
	msg := notAttachedMessage(ref, g)
	switch o := res.Outcomes[key]; {
	case o == nil:
		accepted := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonTargetNotFound), msg)
		if s.rejected != nil {
			accepted = *s.rejected
		}
		res.Outcomes[key] = &Outcome{Policy: key, Generation: s.policy.Generation, DeploymentReason: v1alpha1.WAFReasonDeploymentError, Accepted: accepted}
	case o.Accepted.Status == metav1.ConditionTrue && o.Partial == "":
		o.Partial = msg
	case o.Accepted.Status == metav1.ConditionTrue:
		o.Partial += "; " + msg
	case o.Accepted.Reason == string(gatewayv1.PolicyReasonTargetNotFound):
		o.Accepted.Message += "; " + msg
	}
}

func (s *wafState) hasTarget(ref graph.ObjectRef) bool {
	for _, t := range s.targets {
		if t == ref {
			return true
		}
	}
	return false
}

// evaluate decides one policy's outcome for this Gateway and returns its
// directives, or nil when nothing of it is rendered (unrendered says what
// its targets are left with then, for status), and the protection it gives
// its targets: nil when it gives none, also when held (its bundle in force
// missing here: the data plane keeps enforcing it).
func (res *WAF) evaluate(g *Gateway, in *graph.Input, s *wafState, unrendered string) ([]config.Directive, *Protection) {
	p := s.policy
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	o := res.Outcomes[key]
	if o == nil {
		o = &Outcome{Policy: key, Generation: p.Generation, DeploymentReason: v1alpha1.WAFReasonDeploymentError,
			Accepted: conditions.True(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonAccepted), "Policy is accepted")}
		res.Outcomes[key] = o
	}
	if s.rejected != nil {
		o.Accepted = *s.rejected
		return nil, nil
	}
	if !res.Enabled {
		o.Accepted = conditions.False(string(gatewayv1.PolicyConditionAccepted), v1alpha1.WAFReasonWAFDisabled,
			fmt.Sprintf("WAF is not enabled for Gateway %s: set waf: enabled in its effective NginxProxy (the GatewayClass's, overlaid by the Gateway's)", g.Key))
		return nil, nil
	}
	plan := planBundles(in, p, unrendered)
	o.ResolvedRefs = plan.resolved
	o.Blocked = plan.blocked
	if len(plan.held) > 0 {
		res.Held[key] = plan.held
		if plan.heldPolicy != nil {
			return nil, &Protection{Policy: key, Bundle: *plan.heldPolicy, Held: true}
		}
	}
	if plan.policy == nil {
		return nil, nil
	}
	res.InForce[key] = InForce{Policy: *plan.policy, Logs: plan.logs, FetchedAt: plan.fetchedAt}
	for sha, data := range plan.data {
		res.Bundles[sha] = data
	}
	return wafDirectives(plan), &Protection{Policy: key, Bundle: *plan.policy, Logs: plan.logs, Held: len(plan.held) > 0}
}

// wafStates validates every policy and decides conflicts: a target belongs
// to the oldest valid policy that targets it; later ones are Conflicted.
func wafStates(in *graph.Input) []*wafState {
	claimed := map[graph.ObjectRef]*v1alpha1.WAFGatewayBindingPolicy{}
	var states []*wafState
	for _, p := range sortPolicies(wafPoliciesIn(in)) {
		s := &wafState{policy: p, targets: TargetsOf(p, p.Spec.TargetRefs)}
		states = append(states, s)
		if s.rejected = unreadable(in, "WAFGatewayBindingPolicy", p); s.rejected != nil {
			continue
		}
		if errs := validation.WAFGatewayBindingPolicy(p); len(errs) > 0 {
			c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), errs.ToAggregate().Error())
			s.rejected = &c
			continue
		}
		for _, t := range s.targets {
			if w := claimed[t]; w != nil {
				c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonConflicted),
					fmt.Sprintf("WAFGatewayBindingPolicy %s/%s, which is older, already targets %s", w.Namespace, w.Name, t))
				s.rejected = &c
				break
			}
		}
		if s.rejected != nil {
			continue
		}
		for _, t := range s.targets {
			claimed[t] = p
		}
	}
	return states
}

// WAFEnforcerAddress is where NGINX reaches the WAF enforcer in its pod.
const WAFEnforcerAddress = "127.0.0.1:50000"

// WAFModule is the App Protect module NGINX loads when WAF is enabled, as
// the data-plane image installs it.
const WAFModule = "modules/ngx_http_app_protect_module.so"

// IncludeKindWAF names WAFGatewayBindingPolicy's include files.
const IncludeKindWAF = "waf"
