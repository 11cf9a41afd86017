package graph

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The HTTPRoute and GRPCRoute builders share one skeleton (buildRoute,
// buildRule); what differs by kind is given to it: how a match and the
// filters convert, what a rule checks before its backends are resolved
// (HTTP's retry, redirect and timeouts) and after (the headers HTTP/2
// needs), and what a backendRef's own filters do.

// routeShape is what the skeleton reads of a route of an HTTP kind.
type routeShape struct {
	kind       string
	key        types.NamespacedName
	source     client.Object
	hostnames  []gatewayv1.Hostname
	parentRefs []gatewayv1.ParentReference
	// overLimit is the route's limits (refuseOverLimit's argument).
	overLimit []listLimit
	// matches counts the route's matches, every rule's.
	matches int
}

// ruleShape is what the skeleton reads of one rule, of match type M.
type ruleShape[M any] struct {
	rule     *Rule
	matches  []M
	match    func(M) (Match, error)
	filters  func(matches []Match) (Filters, error)
	session  *gatewayv1.SessionPersistence
	backends []backendShape
	// before checks the rule once its filters are resolved, before its
	// backends are; after, once they are. Their errors, in order, join
	// the rule's.
	before, after func(rule *Rule, f Filters) []error
}

// backendShape is one backendRef: its reference and weight, and what its
// own filters make of the backend (nil: nothing).
type backendShape struct {
	ref    gatewayv1.BackendObjectReference
	weight *int32
	filter func(j int) (apply func(*Backend), err error)
}

// buildRoute makes a route of an HTTP kind: refused whole when over a
// limit, else each rule built by rule(i) and its references resolved.
func buildRoute(in *Input, s routeShape, refs []*ParentRef, rules int, rule func(i int, resolved *resolvedRefs) *Rule) *Route {
	r := newRoute(in, s.kind, s.key, s.source, s.hostnames, refs)
	if r.refuseOverLimit(s.overLimit) {
		return r
	}
	r.checkMatchCount(s.matches)
	r.checkParentRefs(s.parentRefs)
	var resolved resolvedRefs
	for i := range rules {
		r.Rules = append(r.Rules, rule(i, &resolved))
	}
	r.setResolvedRefs(&resolved)
	return r
}

// buildRule fills a rule of route (of kind, in namespace ns) from its
// shape, in the order its errors are said: matches, filters, the rule's
// own checks, backends, the headers and TLS of its backends.
func buildRule[M any](in *Input, kind, ns string, s ruleShape[M], resolved *resolvedRefs) *Rule {
	rule := s.rule
	var errs []error
	if len(s.matches) == 0 {
		rule.Matches = []Match{{Path: PathMatch{Type: PathPrefix, Value: "/"}}}
	}
	for j, m := range s.matches {
		match, err := s.match(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("matches[%d]: %w", j, err))
			continue
		}
		rule.Matches = append(rule.Matches, match)
	}
	f, err := s.filters(rule.Matches)
	if err != nil {
		errs = append(errs, err)
	}
	rule.Filters = f
	if err := resolveFilters(in, ns, rule, resolved); err != nil {
		errs = append(errs, err)
	}
	f = rule.Filters
	errs = append(errs, unsupportedRuleFields(s.session)...)
	if s.before != nil {
		errs = append(errs, s.before(rule, f)...)
	}
	for _, m := range f.Mirrors {
		resolved.addRefused(m.Backend)
	}
	for j, br := range s.backends {
		var apply func(*Backend)
		if br.filter != nil {
			var err error
			if apply, err = br.filter(j); err != nil {
				errs = append(errs, err)
			}
		}
		b, why := resolveBackend(in, kind, ns, br.ref, br.weight)
		if apply != nil {
			apply(b)
		}
		resolved.add(b, why)
		if b.Weight > 0 {
			rule.Backends = append(rule.Backends, b)
		}
	}
	externalNameHosts(rule)
	if err := headerTokens(rule); err != nil {
		errs = append(errs, err)
	}
	if s.after != nil {
		errs = append(errs, s.after(rule, f)...)
	}
	if rule.TLS, err = ruleTLS(rule.Backends); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		rule.Valid, rule.Err = false, errors.Join(errs...).Error()
	}
	return rule
}
