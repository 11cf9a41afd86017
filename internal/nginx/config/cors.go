package config

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/syntax"
)

// corsDirectives renders a rule's CORS filter. A preflight (OPTIONS from an
// allowed origin, with Access-Control-Request-Method) is answered 204 by
// NGINX with the CORS headers; responses to other requests from an allowed
// origin get Access-Control-Allow-Origin (and -Credentials, -Expose-Headers),
// replacing any the backend sent. Wildcards ("*") are answered by echoing
// the request's origin, method or headers, which is valid with and without
// credentials.
func (b *builder) corsDirectives(c *graph.CORS, prefix string) []Directive {
	if c == nil || len(c.Origins) == 0 {
		return nil
	}
	origin := b.addMap(kindCORSOrigin, &Map{Source: "$http_origin", Entries: corsOriginEntries(c.Origins), Default: `""`})
	// A preflight is an OPTIONS request with an Origin and an
	// Access-Control-Request-Method; NGINX answers every preflight itself,
	// with the CORS headers only for allowed origins.
	preflight := b.putMap(&Map{
		Source: Quote("$request_method $http_origin $http_access_control_request_method"), Variable: "$gw_cors_preflight",
		Entries: []MapEntry{{Key: Quote(`~^OPTIONS \S+ \S+$`), Value: "1"}}, Default: `""`,
	})
	allowed := b.addMap(kindCORSPreflight, &Map{
		Source:  Quote(preflight + origin),
		Entries: []MapEntry{{Key: Quote("~^1."), Value: "1"}}, Default: `""`,
	})
	always := func(name, value string) Directive { return D("add_header", name, value, "always") }
	pre := []Directive{always("Access-Control-Allow-Origin", origin)}
	if len(c.Methods) > 0 {
		pre = append(pre, always("Access-Control-Allow-Methods", corsList(c.Methods, "$http_access_control_request_method")))
	}
	if len(c.Headers) > 0 {
		pre = append(pre, always("Access-Control-Allow-Headers", corsList(c.Headers, "$http_access_control_request_headers")))
	}
	if c.Credentials {
		pre = append(pre, always("Access-Control-Allow-Credentials", "true"))
	}
	if len(c.Expose) > 0 {
		pre = append(pre, always("Access-Control-Expose-Headers", Quote(syntax.HeaderList(c.Expose))))
	}
	pre = append(pre, always("Access-Control-Max-Age", strconv.Itoa(int(c.MaxAge))), always("Vary", "Origin"), D("return", "204"))

	ds := []Directive{
		{Name: "if", Args: []string{"(" + allowed + ")"}, Block: pre},
		{Name: "if", Args: []string{"(" + preflight + ")"}, Block: []Directive{D("return", "204")}},
	}
	for _, h := range syntax.CORSHiddenHeaders {
		ds = append(ds, D(prefix+"_hide_header", h))
	}
	ds = append(ds, always("Access-Control-Allow-Origin", origin))
	// Credentials and exposed headers only for allowed origins: empty
	// values add no header.
	if c.Credentials {
		ds = append(ds, always("Access-Control-Allow-Credentials", b.addMap(kindCORSCreds, &Map{
			Source: origin, Entries: []MapEntry{{Key: `""`, Value: `""`}}, Default: "true",
		})))
	}
	if len(c.Expose) > 0 {
		ds = append(ds, always("Access-Control-Expose-Headers", b.addMap(kindCORSExpose, &Map{
			Source: origin, Entries: []MapEntry{{Key: `""`, Value: `""`}}, Default: Quote(syntax.HeaderList(c.Expose)),
		})))
	}
	return append(ds, always("Vary", "Origin"))
}

// corsList is a header value listing values, or echoing the request's
// header when the list is the wildcard.
func corsList(values []string, echo string) string {
	if len(values) == 1 && values[0] == "*" {
		return echo
	}
	return Quote(syntax.HeaderList(values))
}

// corsOriginEntries map an allowed Origin header to itself.
func corsOriginEntries(origins []string) []MapEntry {
	var out []MapEntry
	for _, o := range origins {
		out = append(out, MapEntry{Key: Quote("~*" + corsOriginRegex(o)), Value: "$http_origin"})
	}
	return out
}

// hostLabels matches one or more DNS labels, for a "*" in an origin's host.
const hostLabels = `[a-z0-9-]+(\.[a-z0-9-]+)*`

// corsOriginRegex matches an Origin header against an allowed origin
// (case-insensitively: the map key starts with "~*").
func corsOriginRegex(origin string) string {
	if origin == "*" {
		return `^https?://[^\s/]+$`
	}
	scheme, rest, _ := strings.Cut(origin, "://")
	host, port, hasPort := strings.Cut(rest, ":")
	var re strings.Builder
	re.WriteString("^" + regexp.QuoteMeta(scheme) + "://")
	switch {
	case host == "*":
		re.WriteString(hostLabels)
	case strings.HasPrefix(host, "*."):
		re.WriteString(hostLabels + `\.` + regexp.QuoteMeta(host[2:]))
	default:
		re.WriteString(regexp.QuoteMeta(host))
	}
	if hasPort {
		re.WriteString(":" + port)
	}
	re.WriteString("$")
	return re.String()
}
