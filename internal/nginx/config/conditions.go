package config

import (
	"regexp"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
)

// conditions returns the variables that are "1" when each of a match's
// method, header and query conditions holds; each is a map evaluated only
// when a dispatch needs it.
func (b *builder) conditions(m graph.Match) []string {
	var vars []string
	if m.Method != "" {
		vars = append(vars, b.condition("$request_method", "^"+regexp.QuoteMeta(m.Method)+"$"))
	}
	for _, h := range m.Headers {
		vars = append(vars, b.condition(headerVariable(h.Name), valueRegex(h)))
	}
	for _, q := range m.Query {
		vars = append(vars, b.condition("$args", queryRegex(q)))
	}
	return vars
}

// condition registers a map from source to "1" when regex matches (case-sensitively).
func (b *builder) condition(source, regex string) string {
	return b.addMap(&Map{
		Source:   source,
		Variable: "$gw_c_" + id(source, regex),
		Entries:  []MapEntry{{Key: Quote("~" + regex), Value: "1"}},
		Default:  "0",
	})
}

// headerVariable is NGINX's variable for a request header: $http_ with the
// name lower-cased and '-' turned into '_'.
func headerVariable(name string) string {
	return "$http_" + strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

// valueRegex matches a header value exactly, or by the user's expression.
func valueRegex(v graph.ValueMatch) string {
	if v.Regex {
		return v.Value
	}
	return "^" + regexp.QuoteMeta(v.Value) + "$"
}

// queryRegex matches $args when the first parameter named q.Name has the
// wanted value: it skips parameters with other names, then requires the value.
func queryRegex(q graph.ValueMatch) string {
	name := regexp.QuoteMeta(q.Name)
	value := regexp.QuoteMeta(q.Value)
	if q.Regex {
		value = "(?:" + q.Value + ")"
	}
	return "^(?:(?!" + name + "=)[^&]*&)*" + name + "=" + value + "(?:&|$)"
}
