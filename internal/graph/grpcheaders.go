package graph

import (
	"github.com/gatewall/gatewall/internal/syntax"
)

// grpcHeaders checks the header changes of a rule NGINX passes with
// grpc_pass (a GRPCRoute's, or an HTTPRoute's with h2c backends). NGINX
// 1.22 keeps the names of the request headers a location sets and of the
// response headers it hides in tables whose size no directive changes
// (unlike proxy_pass's, which the renderer sizes): a name longer than 46
// characters, or names that do not fit, fail `nginx -t` or make it warn.
// The names are those the renderer writes: Host and LoopHeader, which
// Gatewall always sets, every request header the rule or a backendRef changes, and the
// response headers the rule sets or removes, and hides for CORS.
func grpcHeaders(rule *Rule) error {
	set := []string{"Host", LoopHeader}
	set = append(set, changedHeaders(rule.Filters.RequestHeaders)...)
	for _, b := range rule.Backends {
		set = append(set, changedHeaders(b.RequestHeaders)...)
	}
	var hide []string
	if m := rule.Filters.ResponseHeaders; m != nil {
		for _, h := range m.Set {
			hide = append(hide, h.Name)
		}
		hide = append(hide, m.Remove...)
	}
	if rule.Filters.CORS != nil {
		hide = append(hide, syntax.CORSHiddenHeaders...)
	}
	return syntax.CheckGRPCHeaders(set, hide)
}

// changedHeaders are the names of the headers a modifier sets, adds or removes.
func changedHeaders(m *HeaderModifier) []string {
	if m == nil {
		return nil
	}
	var out []string
	for _, h := range append(append([]Header(nil), m.Set...), m.Add...) {
		out = append(out, h.Name)
	}
	return append(out, m.Remove...)
}
