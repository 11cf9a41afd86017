package graph

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

func newHTTPRoute(in *Input, k types.NamespacedName, hr *gatewayv1.HTTPRoute, refs []*ParentRef) *Route {
	matches := 0
	for _, rule := range hr.Spec.Rules {
		matches += len(rule.Matches)
	}
	shape := routeShape{kind: KindHTTPRoute, key: k, source: hr, hostnames: hr.Spec.Hostnames, parentRefs: hr.Spec.ParentRefs,
		overLimit: httpRouteLimits(&hr.Spec), matches: matches}
	return buildRoute(in, shape, refs, len(hr.Spec.Rules), func(i int, resolved *resolvedRefs) *Rule {
		src := hr.Spec.Rules[i]
		return buildRule(in, KindHTTPRoute, k.Namespace, ruleShape[gatewayv1.HTTPRouteMatch]{
			rule: &Rule{Index: i, Valid: true}, matches: src.Matches, match: httpMatch,
			filters: func(matches []Match) (Filters, error) { return httpFilters(in, k.Namespace, src.Filters, matches) },
			session: src.SessionPersistence, backends: httpBackends(src.BackendRefs),
			before: func(rule *Rule, f Filters) []error { return httpRuleChecks(rule, f, src) },
			after:  func(rule *Rule, _ Filters) []error { return h2cRule(rule) },
		}, resolved)
	})
}

// httpBackends are an HTTPRoute rule's backendRefs, with the request
// headers their own filters set.
func httpBackends(refs []gatewayv1.HTTPBackendRef) []backendShape {
	out := make([]backendShape, 0, len(refs))
	for _, br := range refs {
		out = append(out, backendShape{ref: br.BackendObjectReference, weight: br.Weight, filter: func(j int) (func(*Backend), error) {
			headers, err := backendFilters(br.Filters)
			if err != nil {
				err = fmt.Errorf("backendRefs[%d].%w", j, err)
			}
			return func(b *Backend) { b.RequestHeaders = headers }, err
		}})
	}
	return out
}

// httpRuleChecks are what an HTTPRoute rule checks before its backends:
// its retry, that a redirect has no backends, its timeouts.
func httpRuleChecks(rule *Rule, f Filters, src gatewayv1.HTTPRouteRule) []error {
	var errs []error
	if retry, note, err := httpRetry(src.Retry); err != nil {
		errs = append(errs, err)
	} else {
		rule.Retry = retry
		if note != "" {
			rule.Notes = append(rule.Notes, note)
		}
	}
	if f.Redirect != nil && len(src.BackendRefs) > 0 {
		errs = append(errs, errors.New("a RequestRedirect filter cannot be used together with backendRefs"))
	}
	if t, err := httpTimeouts(src.Timeouts); err != nil {
		errs = append(errs, err)
	} else {
		rule.Timeouts = t
	}
	return errs
}

// h2cRule says whether an HTTPRoute rule's backends are spoken to with
// HTTP/2 without TLS, and then checks the headers HTTP/2 refuses.
func h2cRule(rule *Rule) []error {
	var errs []error
	h2c, err := h2cBackends(rule.Backends)
	if err != nil {
		errs = append(errs, err)
	}
	rule.H2C = h2c
	if h2c {
		if err := grpcHeaders(rule); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// unsupportedRuleFields refuses a rule's sessionPersistence (an Extended
// feature Gatewall does not implement): serving the rule without it would
// silently drop what it asks for.
func unsupportedRuleFields(sessionPersistence *gatewayv1.SessionPersistence) []error {
	var errs []error
	if sessionPersistence != nil {
		errs = append(errs, errors.New("sessionPersistence is not supported"))
	}
	return errs
}

// backendFilters validates a backendRef's filters: Gatewall applies request
// header modifiers to the requests that backend receives.
func backendFilters(src []gatewayv1.HTTPRouteFilter) (*HeaderModifier, error) {
	var out *HeaderModifier
	for i, f := range src {
		if f.Type != gatewayv1.HTTPRouteFilterRequestHeaderModifier {
			return nil, fmt.Errorf("filters[%d]: filter type %s is not supported on a backendRef; only RequestHeaderModifier is", i, f.Type)
		}
		if out != nil {
			return nil, fmt.Errorf("filters[%d]: a backendRef takes one RequestHeaderModifier", i)
		}
		m, err := headerModifier(f.RequestHeaderModifier)
		if err != nil {
			return nil, fmt.Errorf("filters[%d]: %w", i, err)
		}
		out = m
	}
	return out, nil
}

// h2cBackends says whether a rule's valid backends speak h2c. NGINX passes a
// request with either proxy_pass (HTTP/1.1) or grpc_pass (HTTP/2), so one
// rule cannot share its traffic between the two kinds.
func h2cBackends(bs []*Backend) (bool, error) {
	h2c, other := 0, 0
	for _, b := range bs {
		switch {
		case !b.Valid:
		case b.Protocol == ProtocolH2C:
			h2c++
		default:
			other++
		}
	}
	if h2c > 0 && other > 0 {
		return false, errors.New("backendRefs mix h2c (appProtocol kubernetes.io/h2c) and HTTP/1.1 Services; NGINX cannot split one rule's traffic between the two")
	}
	return h2c > 0, nil
}

func httpMatch(m gatewayv1.HTTPRouteMatch) (Match, error) {
	out := Match{Path: PathMatch{Type: PathPrefix, Value: "/"}}
	if m.Path != nil {
		t := gatewayv1.PathMatchPathPrefix
		if m.Path.Type != nil {
			t = *m.Path.Type
		}
		v := "/"
		if m.Path.Value != nil {
			v = *m.Path.Value
		}
		switch t {
		case gatewayv1.PathMatchExact:
			if err := validation.MatchPath(v); err != nil {
				return out, err
			}
		case gatewayv1.PathMatchPathPrefix:
			if err := validation.MatchPath(v); err != nil {
				return out, err
			}
			if len(v) > 1 {
				v = strings.TrimRight(v, "/")
			}
		case gatewayv1.PathMatchRegularExpression:
			if err := validation.RegexPath(v); err != nil {
				return out, err
			}
		default:
			return out, fmt.Errorf("path type %q is not supported", t)
		}
		out.Path = PathMatch{Type: string(t), Value: v}
	}
	if m.Method != nil {
		if err := validation.HTTPMethod(string(*m.Method)); err != nil {
			return out, err
		}
		out.Method = string(*m.Method)
	}
	if err := validation.ListLength("headers", len(m.Headers), validation.MaxMatchHeaders); err != nil {
		return out, err
	}
	if err := validation.ListLength("queryParams", len(m.QueryParams), validation.MaxMatchQuery); err != nil {
		return out, err
	}
	seen := map[string]bool{}
	for _, h := range m.Headers {
		// Only the first of equivalent (case-insensitive) names counts.
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue
		}
		seen[name] = true
		regex, err := regexType(h.Type, gatewayv1.HeaderMatchExact, gatewayv1.HeaderMatchRegularExpression)
		if err != nil {
			return out, fmt.Errorf("header %s: %w", conditions.Quote(string(h.Name)), err)
		}
		vm, err := headerMatch(string(h.Name), h.Value, regex)
		if err != nil {
			return out, err
		}
		out.Headers = append(out.Headers, vm)
	}
	seenQ := map[string]bool{}
	for _, q := range m.QueryParams {
		name := string(q.Name)
		if seenQ[name] {
			continue
		}
		seenQ[name] = true
		regex, err := regexType(q.Type, gatewayv1.QueryParamMatchExact, gatewayv1.QueryParamMatchRegularExpression)
		if err != nil {
			return out, fmt.Errorf("query parameter %s: %w", conditions.Quote(name), err)
		}
		if err := validation.QueryParamName(name); err != nil {
			return out, err
		}
		check := validation.QueryParamValue
		if regex {
			check = validation.QueryParamValueRegex
		}
		if err := check(q.Value); err != nil {
			return out, err
		}
		out.Query = append(out.Query, ValueMatch{Name: name, Value: q.Value, Regex: regex})
	}
	return out, matchTokens(out)
}

// regexType says whether a match asks for a regular expression. The
// Gateway API requires an unknown match type to be refused, not read as
// its default (Exact).
func regexType[T ~string](t *T, exact, regex T) (bool, error) {
	switch {
	case t == nil || *t == exact:
		return false, nil
	case *t == regex:
		return true, nil
	}
	return false, fmt.Errorf("match type %s is not supported; use %s or %s", conditions.Quote(string(*t)), exact, regex)
}

func headerMatch(name, value string, regex bool) (ValueMatch, error) {
	if err := validation.HeaderName(name); err != nil {
		return ValueMatch{}, err
	}
	check := validation.HeaderValue
	if regex {
		check = validation.HeaderValueRegex
	}
	if err := check(value); err != nil {
		return ValueMatch{}, err
	}
	return ValueMatch{Name: name, Value: value, Regex: regex}, nil
}

// httpTimeouts converts Gateway API durations to NGINX time syntax.
func httpTimeouts(t *gatewayv1.HTTPRouteTimeouts) (Timeouts, error) {
	var out Timeouts
	if t == nil {
		return out, nil
	}
	conv := func(field string, d *gatewayv1.Duration) (string, error) {
		if d == nil {
			return "", nil
		}
		v, err := nginxDuration(string(*d))
		if err != nil {
			return "", fmt.Errorf("timeouts.%s: %w", field, err)
		}
		return v, nil
	}
	var err error
	if out.Request, err = conv("request", t.Request); err != nil {
		return out, err
	}
	if out.BackendRequest, err = conv("backendRequest", t.BackendRequest); err != nil {
		return out, err
	}
	// Both are valid durations here; "" is no timeout.
	if out.Request != "" && out.BackendRequest != "" && milliseconds(out.BackendRequest) > milliseconds(out.Request) {
		return out, errors.New("timeouts: backendRequest cannot be longer than request")
	}
	return out, nil
}
