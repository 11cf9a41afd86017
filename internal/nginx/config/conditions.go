package config

import (
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/syntax"
)

// conditions returns the variables that are "1" when each of a match's
// method, header and query conditions holds; each is a map evaluated only
// when a dispatch needs it.
func (b *builder) conditions(m graph.Match) []string {
	var vars []string
	if m.Method != "" {
		vars = append(vars, b.condition("$request_method", syntax.ExactRegex(m.Method)))
	}
	for _, h := range m.Headers {
		vars = append(vars, b.condition(syntax.HeaderVariable(h.Name), syntax.ValueRegex(h.Value, h.Regex)))
	}
	for _, q := range m.Query {
		vars = append(vars, b.condition("$args", syntax.QueryRegex(q.Name, q.Value, q.Regex)))
	}
	return vars
}

// condition registers a map from source to "1" when regex matches (case-sensitively).
func (b *builder) condition(source, regex string) string {
	return b.addMap(kindConditionVar, &Map{
		Source:  source,
		Entries: []MapEntry{{Key: Quote(syntax.MatchKey(regex)), Value: "1"}},
		Default: "0",
	})
}
