package graph

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/snippets"
	"github.com/gatewall/gatewall/internal/validation"
)

// Snippets (docs/snippets.md) meet in a Gateway's configuration: a
// SnippetsPolicy's http.server.location snippet goes into every location
// of the Gateway's routes, a SnippetsFilter's into the locations of the
// rules that name it. NGINX refuses some directives twice in one block,
// so where they meet they must not repeat one; and their zones share the
// Gateway's memory. The graph decides both, since the filters' verdicts
// are the rules' (a rule whose filter cannot be used answers 500): the
// Gateway's policies first, oldest first, then the filters its rules
// name. A policy's snippets are the Gateway's owner's, so they win over a
// route owner's filter where the two meet; between policies, and between
// the filters' zones, the older wins. Package policy reports the
// policies' outcomes (GatewaySnippets) as the engine's.

// Kinds of the snippets' objects.
const (
	KindSnippetsFilter = "SnippetsFilter"
	KindSnippetsPolicy = "SnippetsPolicy"
)

// SnippetsZoneBudget bounds the shared memory zones the snippets on one
// Gateway declare (limit_conn_zone): NGINX maps them when it reads the
// configuration, in every data-plane pod.
const SnippetsZoneBudget int64 = 128 << 20

// SnippetsDisabled says why an installation's snippets are not used.
const SnippetsDisabled = "snippets are disabled in this installation: Gatewall uses SnippetsFilters and SnippetsPolicies only when its manager runs with --snippets"

// policyReasonOverBudget is the Accepted reason of a policy over one of
// its Gateway's budgets (policy.PolicyReasonOverBudget, the same word).
const policyReasonOverBudget = "OverBudget"

var snippetsFilterKind = &ExtensionFilterKind{
	Group:   extensionGroup,
	Kind:    KindSnippetsFilter,
	New:     func() client.Object { return &v1alpha1.SnippetsFilter{} },
	NewList: func() client.ObjectList { return &v1alpha1.SnippetsFilterList{} },
	Items: func(l client.ObjectList) []client.Object {
		items := l.(*v1alpha1.SnippetsFilterList).Items
		out := make([]client.Object, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out
	},
	Secrets: func(client.Object) []types.NamespacedName { return nil },
	Resolve: resolveSnippetsFilter,
	Controllers: func(o client.Object) *[]v1alpha1.ControllerStatus {
		return &o.(*v1alpha1.SnippetsFilter).Status.Controllers
	},
	typ: reflect.TypeOf(&v1alpha1.SnippetsFilter{}),
}

// FilterSnippets are a SnippetsFilter's snippets, read and allowed.
type FilterSnippets struct {
	Filter  ObjectRef
	Checked *snippets.Checked
	// source orders filters by age.
	source client.Object
}

// resolveSnippetsFilter checks a SnippetsFilter of the input: the CRD's
// rules, then its snippets against the allow-list of a route owner's.
func resolveSnippetsFilter(in *Input, o client.Object) *ExtensionFilter {
	f := o.(*v1alpha1.SnippetsFilter)
	ef := &ExtensionFilter{Ref: ObjectRef{Kind: KindSnippetsFilter, Key: key(f.Namespace, f.Name)}}
	if !in.Snippets {
		ef.Error, ef.Invalid, ef.Reason = SnippetsDisabled, true, v1alpha1.SnippetsReasonDisabled
		return ef
	}
	if errs := validation.SnippetsFilter(f); len(errs) > 0 {
		ef.Error, ef.Invalid = errs.ToAggregate().Error(), true
		return ef
	}
	c, err := snippets.Check(snippets.RuleScope, f.Spec.Snippets)
	if err != nil {
		ef.Error, ef.Invalid = err.Error(), true
		return ef
	}
	ef.Snippets = &FilterSnippets{Filter: ef.Ref, Checked: c, source: f}
	ef.Detail = "its snippets are read and allowed; they go into the configuration of the route rules that name it"
	return ef
}

// GatewaySnippets are the SnippetsPolicies that target a Gateway, oldest
// first, each with its outcome there.
type GatewaySnippets struct {
	Policies []*PolicySnippets
	// zones spends the Gateway's SnippetsZoneBudget.
	zones zoneLedger
}

// PolicySnippets is a SnippetsPolicy on a Gateway: its snippets, or why
// it is refused there.
type PolicySnippets struct {
	Policy *v1alpha1.SnippetsPolicy
	// Checked are its snippets; nil when Refused.
	Checked *snippets.Checked
	// Refused is its Accepted=False condition on this Gateway, or nil.
	Refused *metav1.Condition
}

// Accepted are the policies whose snippets the Gateway gets, oldest first.
func (s *GatewaySnippets) Accepted() []*PolicySnippets {
	var out []*PolicySnippets
	for _, p := range s.Policies {
		if p.Refused == nil {
			out = append(out, p)
		}
	}
	return out
}

// buildGatewaySnippets decides the SnippetsPolicies that target the
// Gateway: oldest first, each refused if snippets are disabled, if it is
// invalid, if its snippets repeat an older one's directive NGINX takes
// once where they meet (its server or location snippets), or if its zones
// do not fit the Gateway's budget.
func buildGatewaySnippets(in *Input, g *Gateway) *GatewaySnippets {
	out := &GatewaySnippets{zones: zoneLedger{limit: SnippetsZoneBudget, gateway: g.Key.String()}}
	var ps []*v1alpha1.SnippetsPolicy
	for _, o := range in.Policies[KindSnippetsPolicy] {
		if p, ok := o.(*v1alpha1.SnippetsPolicy); ok && targetsGateway(p, g) {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return Older(ps[i], ps[j]) })
	refuse := func(reason, format string, args ...any) *metav1.Condition {
		c := conditions.False(string(gatewayv1.PolicyConditionAccepted), reason, fmt.Sprintf(format, args...))
		return &c
	}
	// claimed are the once-only directives of the accepted policies, by
	// context, and the policy that has each.
	claimed := map[v1alpha1.NginxContext]map[string]string{}
	for _, p := range ps {
		ps := &PolicySnippets{Policy: p}
		out.Policies = append(out.Policies, ps)
		name := p.Namespace + "/" + p.Name
		if msg, ok := in.Unreadable(KindSnippetsPolicy, key(p.Namespace, p.Name)); ok {
			ps.Refused = refuse(string(gatewayv1.PolicyReasonInvalid), "%s", msg)
			continue
		}
		if !in.Snippets {
			ps.Refused = refuse(v1alpha1.SnippetsReasonDisabled, "%s", SnippetsDisabled)
			continue
		}
		if errs := validation.SnippetsPolicy(p); len(errs) > 0 {
			ps.Refused = refuse(string(gatewayv1.PolicyReasonInvalid), "%s", errs.ToAggregate())
			continue
		}
		c, err := snippets.Check(snippets.GatewayScope, p.Spec.Snippets)
		if err != nil {
			ps.Refused = refuse(string(gatewayv1.PolicyReasonInvalid), "%s", err)
			continue
		}
		if clash := clashes(c, claimed); clash != "" {
			ps.Refused = refuse(string(gatewayv1.PolicyReasonConflicted), "on Gateway %s, %s", g.Key, clash)
			continue
		}
		if why, ok := out.zones.spend("SnippetsPolicy "+name, c.ZoneBytes()); !ok {
			ps.Refused = refuse(policyReasonOverBudget, "%s", why)
			continue
		}
		ps.Checked = c
		for _, ctx := range []v1alpha1.NginxContext{v1alpha1.NginxContextHTTPServer, v1alpha1.NginxContextHTTPServerLocation} {
			for _, k := range c.Singles(ctx) {
				if claimed[ctx] == nil {
					claimed[ctx] = map[string]string{}
				}
				claimed[ctx][k] = "SnippetsPolicy " + name
			}
		}
	}
	return out
}

// clashes says which directive of c an accepted policy already has in the
// same context, where NGINX takes it once.
func clashes(c *snippets.Checked, claimed map[v1alpha1.NginxContext]map[string]string) string {
	for _, ctx := range []v1alpha1.NginxContext{v1alpha1.NginxContextHTTPServer, v1alpha1.NginxContextHTTPServerLocation} {
		for _, k := range c.Singles(ctx) {
			if owner, ok := claimed[ctx][k]; ok {
				return fmt.Sprintf("%s, which is older, already has %s in its %s snippet, and NGINX takes one per block", owner, conditions.Quote(k), ctx)
			}
		}
	}
	return ""
}

// targetsGateway says whether a SnippetsPolicy names the Gateway (a
// target of another kind or group is its validation's to refuse).
func targetsGateway(p *v1alpha1.SnippetsPolicy, g *Gateway) bool {
	if p.Namespace != g.Key.Namespace {
		return false
	}
	return slices.ContainsFunc(p.Spec.TargetRefs, func(t gatewayv1.LocalPolicyTargetReference) bool {
		return t.Kind == v1alpha1.KindGateway && t.Group == gatewayv1.GroupName && string(t.Name) == g.Key.Name
	})
}

// settleSnippets decides, once the routes are built, whether each rule's
// SnippetsFilters can be used on this Gateway: their zones must fit the
// budget the Gateway's policies left (oldest filter first), and their
// location snippets must not repeat a once-only directive the Gateway's
// policies or another of the rule's filters put in the same locations. A
// rule whose filters cannot be used answers 500, and its route's
// ResolvedRefs says why.
func (g *Gateway) settleSnippets(routes []*Route) {
	if g.Snippets == nil {
		return
	}
	owners := map[string]string{}
	for _, p := range g.Snippets.Accepted() {
		for _, k := range p.Checked.Singles(v1alpha1.NginxContextHTTPServerLocation) {
			owners[k] = "SnippetsPolicy " + p.Policy.Namespace + "/" + p.Policy.Name + " of the Gateway"
		}
	}
	// A rule that answers 500 for another filter uses none of its
	// snippets, nor takes their zones.
	for _, r := range routes {
		for _, rule := range r.Rules {
			if rule.Filters.Error != "" {
				rule.Filters.Snippets = nil
			}
		}
	}
	over := g.spendFilterZones(routes)
	for _, r := range routes {
		for _, rule := range r.Rules {
			f := &rule.Filters
			if !rule.Valid || len(f.Snippets) == 0 {
				continue
			}
			msg := ruleSnippetsProblem(f.Snippets, owners, over)
			if msg == "" {
				continue
			}
			f.Snippets = nil
			f.fail(msg)
			if r.resolved != nil {
				r.resolved.addFilter(RouteReasonInvalidFilter, fmt.Sprintf("spec.rules[%d]: %s (the rule answers 500)", rule.Index, msg))
				r.setResolvedRefs(r.resolved)
			}
			rule.Notes = append(rule.Notes, "answers 500: a filter it needs cannot process its requests (ResolvedRefs says why)")
		}
	}
}

// spendFilterZones spends what the policies left of the zone budget on
// the filters the routes' valid rules name, oldest first, and returns why
// each that does not fit is refused.
func (g *Gateway) spendFilterZones(routes []*Route) map[ObjectRef]string {
	seen := map[ObjectRef]bool{}
	var filters []*FilterSnippets
	for _, r := range routes {
		for _, rule := range r.Rules {
			if !rule.Valid {
				continue
			}
			for _, fs := range rule.Filters.Snippets {
				if !seen[fs.Filter] {
					seen[fs.Filter] = true
					filters = append(filters, fs)
				}
			}
		}
	}
	sort.Slice(filters, func(i, j int) bool { return Older(filters[i].source, filters[j].source) })
	over := map[ObjectRef]string{}
	for _, fs := range filters {
		if why, ok := g.Snippets.zones.spend(fs.Filter.String(), fs.Checked.ZoneBytes()); !ok {
			over[fs.Filter] = why
		}
	}
	return over
}

// ruleSnippetsProblem says why a rule's SnippetsFilters cannot be used
// together on this Gateway, "" when they can.
func ruleSnippetsProblem(filters []*FilterSnippets, owners map[string]string, over map[ObjectRef]string) string {
	mine := map[string]string{}
	for k, v := range owners {
		mine[k] = v
	}
	var problems []string
	for _, fs := range filters {
		if why, ok := over[fs.Filter]; ok {
			problems = append(problems, fmt.Sprintf("%s: %s", fs.Filter, why))
			continue
		}
		for _, k := range fs.Checked.Singles(v1alpha1.NginxContextHTTPServerLocation) {
			if owner, ok := mine[k]; ok {
				problems = append(problems, fmt.Sprintf("%s has %s in its http.server.location snippet, which %s has in the same locations, and NGINX takes one per block",
					fs.Filter, conditions.Quote(k), owner))
				continue
			}
			mine[k] = fs.Filter.String()
		}
	}
	return strings.Join(problems, "; ")
}

// zoneLedger spends a Gateway's budget of snippets' zones, oldest first.
type zoneLedger struct {
	limit, spent int64
	gateway      string
	users        []string
}

// spend takes n bytes for an object, or says why they do not fit.
func (l *zoneLedger) spend(who string, n int64) (string, bool) {
	if n == 0 {
		return "", true
	}
	if l.spent+n > l.limit {
		older := "no older object has any"
		if len(l.users) > 0 {
			older = "older ones have " + strings.Join(l.users, ", ")
		}
		return fmt.Sprintf("its zones (%s) would take Gateway %s over its budget of %s for snippets' zones (%s)",
			sizeOf(n), l.gateway, sizeOf(l.limit), older), false
	}
	l.spent += n
	l.users = append(l.users, fmt.Sprintf("%s %s", who, sizeOf(n)))
	return "", true
}

// sizeOf writes a size as NGINX reads it: in m or k when whole.
func sizeOf(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dm", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dk", n>>10)
	}
	return fmt.Sprintf("%d", n)
}
