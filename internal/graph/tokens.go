package graph

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// Values that pass their own checks can still make a token longer than
// NGINX reads (syntax.MaxToken) once written: a header value of 4,096
// characters becomes a 4,099-byte regex, a query match repeats its name
// and escapes regex characters, header changes of a rule and a backendRef
// are joined, a header value's quotes and backslashes are escaped and each
// '$' that is not a variable becomes ${gw_dollar}. These checks write each value as the renderer does (package
// syntax) and refuse the rule when it would not fit, so NGINX never sees it.

// matchTokens checks the header and query conditions of a match.
func matchTokens(m Match) error {
	for _, h := range m.Headers {
		if err := syntax.CheckToken(fmt.Sprintf("the match of header %s", h.Name), syntax.MatchKey(syntax.ValueRegex(h.Value, h.Regex))); err != nil {
			return err
		}
	}
	for _, q := range m.Query {
		if err := syntax.CheckToken(fmt.Sprintf("the match of query parameter %s", q.Name), syntax.MatchKey(syntax.QueryRegex(q.Name, q.Value, q.Regex))); err != nil {
			return err
		}
	}
	return nil
}

// headerTokens checks the values of a rule's header changes.
func headerTokens(rule *Rule) error {
	if err := requestHeaderTokens(rule.Filters.RequestHeaders, rule.Backends); err != nil {
		return err
	}
	return responseHeaderTokens(rule.Filters.ResponseHeaders)
}

// requestHeaderTokens checks the values NGINX writes for a rule's request
// header changes. A value is written alone (set), after the request's own
// value ("$http_<name>,<value>": add), or, when a backendRef changes a
// header the rule changes too, joined to the rule's value. The longest of
// these forms, the request's value then the rule's then the backendRef's,
// must fit for every header and backendRef.
func requestHeaderTokens(rule *HeaderModifier, backends []*Backend) error {
	ruleValues := headerValues(rule)
	check := func(backend map[string]Header) error {
		names := map[string]string{}
		for k, h := range ruleValues {
			names[k] = h.Name
		}
		for k, h := range backend {
			if _, ok := names[k]; !ok {
				names[k] = h.Name
			}
		}
		keys := make([]string, 0, len(names))
		for k := range names {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var parts []string
			for _, h := range []Header{ruleValues[k], backend[k]} {
				if h.Name != "" {
					parts = append(parts, h.Value)
				}
			}
			value := syntax.AppendedHeaderValue(names[k], strings.Join(parts, ","))
			if err := syntax.CheckToken(fmt.Sprintf("the value of request header %s", names[k]), value); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check(nil); err != nil {
		return err
	}
	for _, b := range backends {
		if err := check(headerValues(b.RequestHeaders)); err != nil {
			return err
		}
	}
	return nil
}

// headerValues are the headers a modifier sets or adds, by lower-case name.
func headerValues(m *HeaderModifier) map[string]Header {
	out := map[string]Header{}
	if m == nil {
		return out
	}
	for _, h := range append(append([]Header(nil), m.Set...), m.Add...) {
		out[strings.ToLower(h.Name)] = h
	}
	return out
}

// responseHeaderTokens checks the values of response header changes, which
// NGINX writes alone.
func responseHeaderTokens(m *HeaderModifier) error {
	if m == nil {
		return nil
	}
	for _, h := range append(append([]Header(nil), m.Set...), m.Add...) {
		if err := syntax.CheckToken(fmt.Sprintf("the value of response header %s", h.Name), syntax.HeaderValue(h.Value)); err != nil {
			return err
		}
	}
	return nil
}

// corsTokens checks the lists a CORS filter writes as one header value.
func corsTokens(c *CORS) error {
	for _, l := range []struct {
		field  string
		values []string
	}{{"allowHeaders", c.Headers}, {"exposeHeaders", c.Expose}} {
		if err := syntax.CheckToken(l.field+" listed in one header", syntax.HeaderList(l.values)); err != nil {
			return err
		}
	}
	return nil
}
