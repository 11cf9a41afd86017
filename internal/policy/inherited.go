package policy

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// settings are what one policy of an inherited kind sets.
type settings[S any] interface {
	// fields names the fields it sets, for conflicts.
	fields() []string
	// overlay returns the settings with other's set fields on top.
	overlay(other S) S
}

// inherited is a GEP-713 inherited policy kind targeting Gateways,
// HTTPRoutes and GRPCRoutes: a policy on a Gateway is the default for every
// route attached to it, a route's own policies override it field by field.
// The engine decides attachment, conflicts (oldest wins, naming the
// winner), inheritance and the outcome per ancestor Gateway; the kind says
// what its settings are and how they render.
type inherited[S settings[S]] struct {
	gatewallKind
	affected, include, targetsField string
	// noun names the settings in messages ("proxy settings").
	noun      string
	newObject func() v1alpha1.PolicyWithStatus
	newList   func() client.ObjectList
	// parse re-checks a policy's CRD rules and returns its settings, and
	// what of them no supported NGINX applies ("" when all apply: the
	// policy is then Programmed=False, PartiallyInvalid, with it).
	parse func(v1alpha1.Policy) (S, string, error)
	// gateway renders the Gateway's merged settings at http level; an
	// error says why NGINX would reject them.
	gateway func(gw S) ([]config.Directive, error)
	// route renders a route's own merged settings for its locations.
	route func(rt routeTarget[S]) ([]config.Directive, *targetIssue)
	// everyRoute: route is called for every attached route, also those
	// without policies of their own (rt.local is then empty), for kinds
	// that render the Gateway's settings in the routes' locations.
	everyRoute bool
	// pinned, if set, adds http-level directives once the rest is
	// rendered; rendered are the settings rendered on some target.
	pinned func(gw S, rendered []S, res *Result) []config.Directive
	// admit, if set, checks the Gateway's budgets (budget.go): given the
	// accepted policies with a target on the Gateway, oldest first, it
	// returns why each one that does not fit is refused there.
	admit func(g *Gateway, here []*state[S]) map[*state[S]]string
}

func (k *inherited[S]) AffectedType() string       { return k.affected }
func (k *inherited[S]) NewObject() client.Object   { return k.newObject() }
func (k *inherited[S]) NewList() client.ObjectList { return k.newList() }
func (k *inherited[S]) Validate(p v1alpha1.Policy) error {
	_, _, err := k.parse(p)
	return err
}
func (k *inherited[S]) TargetsField() string { return k.targetsField }
func (k *inherited[S]) Targets() TargetKinds { return GatewayAPITargets }
func (k *inherited[S]) Reads() []string      { return nil }

// routeTarget is a route with the settings of its own accepted policies,
// and what it inherits.
type routeTarget[S any] struct {
	ref   graph.ObjectRef
	route *graph.Route
	// local are the route's own policies merged; names names them.
	local S
	names string
	// gw are the Gateway's settings; gwNames names its policies ("" when none).
	gw      S
	gwNames string
	gwKey   types.NamespacedName
	// g is the Gateway, for what a route's outcome depends on beyond the
	// route (the other routes on its ports).
	g *Gateway
}

// from names where a route's effective settings come from, for messages.
func (rt routeTarget[S]) from(kind string) string {
	s := kind + " " + rt.names + " on the route"
	if rt.gwNames != "" {
		s += ", " + rt.gwNames + " on Gateway " + rt.gwKey.String()
	}
	return s
}

// state is a policy's global verdict, the same for every Gateway.
type state[S any] struct {
	policy   v1alpha1.Policy
	targets  []graph.ObjectRef
	settings S
	// ignored is what of the policy no supported NGINX applies ("" if none).
	ignored  string
	rejected *metav1.Condition // Invalid or Conflicted
}

// Evaluate attaches the kind's policies to one Gateway. Conflicts are
// decided across every policy of the snapshot, so every Gateway agrees on
// them.
//
// A policy has one outcome per Gateway, but it may target the Gateway and
// several of its routes. On each of those targets it is rendered, rendered
// in part (some fields have no effect there), or refused (NGINX would
// reject the effective settings there, so nothing of it is rendered there).
// A refusal on one target never takes the policy off its other targets, and
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
func (k *inherited[S]) Evaluate(g *Gateway, in *graph.Input) Attachment {
	res := newResult(k.include)
	states := k.states(in) // this Gateway's own: refusals here stay here
	gwRef := gatewayRef(g)
	if k.admit != nil {
		for s, why := range k.admit(g, onGateway(g, states)) {
			s.rejected = overBudget(why)
		}
	}
	on := func(t graph.ObjectRef) []*state[S] {
		var out []*state[S]
		for _, s := range states {
			if slices.Contains(s.targets, t) {
				out = append(out, s)
			}
		}
		return out
	}
	verdicts := map[*state[S]]*verdict{}
	// attach records that the policies apply to one more target here.
	attach := func(ss []*state[S]) {
		for _, s := range ss {
			if verdicts[s] == nil {
				verdicts[s] = &verdict{}
			}
			if s.rejected == nil {
				verdicts[s].targets++
			}
		}
	}
	report := func(ss []*state[S], i *targetIssue) {
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
	dirs, err := k.gateway(gw)
	if err != nil {
		report(gwPolicies, &targetIssue{target: gwRef, refused: true, msg: fmt.Sprintf(
			"NGINX would reject the %s of Gateway %s (%s %s on the Gateway, and NGINX's defaults): %s",
			k.noun, g.Key, k.Name(), policyNames(gwPolicies), err)})
		var none S
		gw, gwPolicies, dirs = none, nil, nil
	}
	res.HTTP = dirs
	rendered := []S{gw}
	if len(gwPolicies) > 0 {
		res.Affected[gwRef] = true
	}

	gwNames := policyNames(gwPolicies) // "" when none
	for _, ref := range g.refs {
		if len(gwPolicies) > 0 {
			res.Affected[ref] = true // inherits the Gateway's settings
		}
		attach(on(ref))
		rp := accepted(on(ref))
		if len(rp) == 0 && !k.everyRoute {
			continue
		}
		local := merged(rp)
		dirs, issue := k.route(routeTarget[S]{ref: ref, route: g.attached[ref], local: local, names: policyNames(rp),
			gw: gw, gwNames: gwNames, gwKey: g.Key, g: g})
		report(rp, issue)
		if len(dirs) > 0 {
			res.Routes[ref] = dirs
			res.Affected[ref] = true
			rendered = append(rendered, local)
		}
	}

	for _, ref := range g.unattached {
		ss := on(ref)
		attach(ss)
		report(accepted(ss), &targetIssue{target: ref, refused: true, notAttached: true, msg: notAttachedMessage(ref, g)})
	}

	if k.pinned != nil {
		res.HTTP = append(res.HTTP, k.pinned(gw, rendered, res)...)
	}

	for s, v := range verdicts {
		key := types.NamespacedName{Namespace: s.policy.GetNamespace(), Name: s.policy.GetName()}
		o := &Outcome{Policy: key, Generation: s.policy.GetGeneration()}
		if s.rejected != nil {
			o.Accepted = *s.rejected
		} else {
			o.Accepted, o.Partial = v.outcome()
			o.Partial = withIgnored(o.Partial, s.ignored)
		}
		if o.Accepted.Status == metav1.ConditionTrue && slices.Contains(s.targets, gwRef) {
			o.Accepted.Message += outsideTLSListeners(g.Gateway, "apply to")
		}
		res.Outcomes[key] = o
	}
	return res
}

// onGateway are the accepted policies with a target on the Gateway: the
// Gateway or a route attached to it, in the order given.
func onGateway[S any](g *Gateway, states []*state[S]) []*state[S] {
	gwRef := gatewayRef(g)
	var out []*state[S]
	for _, s := range states {
		if s.rejected == nil && slices.ContainsFunc(s.targets, func(t graph.ObjectRef) bool { return t == gwRef || g.attached[t] != nil }) {
			out = append(out, s)
		}
	}
	return out
}

// withIgnored adds what of a policy no supported NGINX applies to its
// Partial message.
func withIgnored(partial, ignored string) string {
	switch {
	case ignored == "":
		return partial
	case partial == "":
		return "Policy is not fully programmed: " + ignored
	}
	return partial + "; " + ignored
}

// states validates every policy of the kind and decides conflicts: on each
// target, a field belongs to the oldest valid policy that sets it; a policy
// that sets a field another, older one already sets on a shared target is
// Conflicted.
func (k *inherited[S]) states(in *graph.Input) []*state[S] {
	return decide(in, k.Name(), k.parse)
}

// decide validates every policy of a kind with parse and decides conflicts
// (see inherited.states); kinds of every attachment share it.
func decide[S settings[S]](in *graph.Input, kind string, parse func(v1alpha1.Policy) (S, string, error)) []*state[S] {
	claimed := map[graph.ObjectRef]map[string]v1alpha1.Policy{}
	var states []*state[S]
	for _, p := range sortPolicies(values(in.Policies[kind])) {
		s := &state[S]{policy: p, targets: TargetsOf(p, p.PolicyTargetRefs())}
		states = append(states, s)
		if s.rejected = unreadable(in, kind, p); s.rejected != nil {
			continue
		}
		set, ignored, err := parse(p)
		if err != nil {
			c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonInvalid), err.Error())
			s.rejected = &c
			continue
		}
		s.settings, s.ignored = set, ignored
		for _, t := range s.targets {
			for _, f := range set.fields() {
				if w := claimed[t][f]; w != nil {
					c := conditions.False(string(gatewayv1.PolicyConditionAccepted), string(gatewayv1.PolicyReasonConflicted),
						fmt.Sprintf("%s %s/%s, which is older, already sets %s on %s", kind, w.GetNamespace(), w.GetName(), f, t))
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
				claimed[t] = map[string]v1alpha1.Policy{}
			}
			for _, f := range set.fields() {
				claimed[t][f] = p
			}
		}
	}
	return states
}

// fieldSet is a settings field's name and whether it is set.
type fieldSet struct {
	name string
	set  bool
}

// setFields are the names of the fields that are set, in the order given:
// the order in which conflicts name them.
func setFields(fields []fieldSet) []string {
	var out []string
	for _, f := range fields {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

func accepted[S any](ss []*state[S]) []*state[S] {
	var out []*state[S]
	for _, s := range ss {
		if s.rejected == nil {
			out = append(out, s)
		}
	}
	return out
}

func merged[S settings[S]](ss []*state[S]) S {
	var b S
	for _, s := range ss {
		b = b.overlay(s.settings)
	}
	return b
}

func policyNames[S any](ss []*state[S]) string {
	keys := make([]types.NamespacedName, 0, len(ss))
	for _, s := range ss {
		keys = append(keys, types.NamespacedName{Namespace: s.policy.GetNamespace(), Name: s.policy.GetName()})
	}
	return names(keys)
}
