package config

import (
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/syntax"
)

// Authentication of a rule's requests, in its location's access phase,
// after the rewrite phase and before anything reaches a backend: an
// AuthenticationFilter (each type written by a function of its own,
// authenticators) and the Gateway API's ExternalAuth (NGINX's auth_request
// to an internal location proxying to the authorization service). Both
// may apply together; NGINX then requires both. A rule whose
// authentication cannot be written answers 500 (never serves
// unauthenticated): the graph says so in its statuses (Filters.Error), and
// the renderer does the same for a type it has no function for.

// authenticators write the directives of an authentication type: the
// location's, and the headers it sets on the request to the backend (with
// prefix: proxy or grpc).
var authenticators = map[v1alpha1.AuthType]func(b *builder, a *graph.Authentication, prefix string) (access, headers []Directive){
	v1alpha1.AuthTypeBasic: (*builder).basicAuth,
	v1alpha1.AuthTypeJWT:   (*builder).jwtAuth,
}

// authentication returns a rule's authentication directives and headers;
// ok is false when there is no function for its type (the rule must
// answer 500).
func (b *builder) authentication(a *graph.Authentication, prefix string) (access, headers []Directive, ok bool) {
	if a == nil {
		return nil, nil, true
	}
	write, ok := authenticators[a.Type]
	if !ok {
		return nil, nil, false
	}
	access, headers = write(b, a, prefix)
	return access, headers, true
}

// basicAuth is HTTP Basic authentication: the realm, and the file of users
// written from the filter's Secret (checked and written anew by the
// graph), as a secret file of the data plane (mode 0600, as certificates).
func (b *builder) basicAuth(a *graph.Authentication, _ string) (access, headers []Directive) {
	ba := a.Basic
	path := b.names.of(kindUsersFile, ba.Secret.Namespace, ba.Secret.Name)
	b.addCert(path, ba.Users, "Secret "+ba.Secret.String())
	return []Directive{D("auth_basic", Quote(RealmValue(ba.Realm))), D("auth_basic_user_file", path)}, nil
}

// RealmValue is a realm as auth_basic takes it: NGINX writes it between
// the quotes of realm="..." in the WWW-Authenticate header as it is, so
// the header's own escapes (RFC 9110 quoted-pair) carry its quotes and
// backslashes.
func RealmValue(realm string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(realm)
}

// ExternalAuthTimeout bounds asking the authorization service: each
// attempt (sending the request, reading the answer) and the time in which
// another endpoint may be tried. A slow service makes the request fail
// (500) instead of holding it; a rule's shorter timeout bounds it further.
const ExternalAuthTimeout = 10000 // milliseconds

// externalAuthBodyVar holds the part of the request body sent to the
// authorization service; the location of a rule that forwards bodies sets
// it, its authorization subrequest reads it.
const externalAuthBodyVar = "$gw_auth_body"

// externalAuth renders a rule's ExternalAuth: the location's directives
// (the authorization subrequest, the headers its answer gives, the body's
// reading when it is forwarded) and the headers to set on the request to
// the backend, which replace any other value of theirs. The internal
// location asking the service is registered in extra, named by what it
// does, so rules asking alike share it.
func (b *builder) externalAuth(ea *graph.ExternalAuth, t graph.Timeouts, prefix string, extra map[string]*Location) (access, headers []Directive) {
	if ea == nil {
		return nil, nil
	}
	timeout := ExternalAuthTimeout
	for _, d := range []string{t.Request, t.BackendRequest} {
		if ms, err := strconv.Atoi(strings.TrimSuffix(d, "ms")); err == nil && ms < timeout {
			timeout = ms
		}
	}
	up := b.upstream(ea.Backend)
	parts := []string{up, ea.PathPrefix, strconv.Itoa(ea.MaxBodySize), strconv.Itoa(timeout)}
	parts = append(parts, ea.RequestHeaders...)
	path := b.names.of(kindExternalAuthPath, parts...)
	if _, ok := extra[path]; !ok {
		extra[path] = b.externalAuthLocation(path, up, ea, timeout)
	}
	if ea.MaxBodySize > 0 {
		access = append(access, D("set", externalAuthBodyVar, `""`), D("rewrite_by_lua_block", ForwardBodyLua(ea.MaxBodySize)))
	}
	access = append(access, D("auth_request", Quote(path)))
	for _, h := range ea.ResponseHeaders {
		v := b.names.of(kindAuthHeaderVar, strings.ToLower(h))
		access = append(access, D("auth_request_set", v, "$upstream_"+strings.TrimPrefix(syntax.HeaderVariable(h), "$")))
		headers = append(headers, D(prefix+"_set_header", h, v))
	}
	return access, headers
}

// externalAuthLocation is the internal location of authorization
// subrequests: the request's method and URI (after the filter's path
// prefix), the headers the Gateway API sends and those the filter allows,
// no body or the part the location read, to the service's upstream.
func (b *builder) externalAuthLocation(path, up string, ea *graph.ExternalAuth, timeout int) *Location {
	ds := []Directive{
		D("proxy_method", "$request_method"),
		// Only what the filter sends: the client's other headers (its
		// cookies, say) are not the service's.
		D("proxy_pass_request_headers", "off"),
		D("proxy_set_header", "Host", "$gw_host"),
		D("proxy_set_header", "Authorization", "$http_authorization"),
		D("proxy_set_header", graph.LoopHeader, "$gw_loop_out"),
		// Keeps the connections to the service alive (its upstream's keepalive).
		D("proxy_set_header", "Connection", `""`),
		D("proxy_set_header", "Transfer-Encoding", `""`),
	}
	for _, h := range ea.RequestHeaders {
		ds = append(ds, D("proxy_set_header", h, syntax.HeaderVariable(h)))
	}
	if ea.MaxBodySize > 0 {
		// NGINX sets the Content-Length of the body it sends.
		ds = append(ds, D("proxy_set_body", externalAuthBodyVar))
	} else {
		// auth_request never sends the body; the client's length would
		// make the service wait for one.
		ds = append(ds, D("proxy_pass_request_body", "off"), D("proxy_set_header", "Content-Length", `"0"`))
	}
	// Each attempt, and the attempts together: a slow service is not
	// asked again on another endpoint past the bound.
	ms := strconv.Itoa(timeout) + "ms"
	ds = append(ds, D("proxy_read_timeout", ms), D("proxy_send_timeout", ms), D("proxy_next_upstream_timeout", ms))
	if be := ea.Backend; be.TLS != nil {
		ds = append(ds, b.backendTLS("proxy", be.TLS)...)
	}
	// The path prefix has only URI path characters (validation.Path).
	ds = append(ds, passDirective(false, ea.Backend.TLS != nil, up+ea.PathPrefix+"$request_uri"))
	return &Location{Modifier: "=", Path: path, Internal: true, Directives: ds}
}

// ForwardBodyLua reads the request body in the rewrite phase, so that the
// authorization subrequest (access phase) can send it: auth_request sends
// none itself. A body over max bytes is refused with 413, as the Gateway
// API asks, by its declared length before it is read, else once read; one
// NGINX buffered to a file is read from there (at most max+1 bytes).
// Gatewall's own code, with one number of its own in it.
func ForwardBodyLua(max int) string {
	m := strconv.Itoa(max)
	return `local max = ` + m + ` local n = tonumber(ngx.var.content_length) if n and n > max then return ngx.exit(413) end ` +
		`ngx.req.read_body() local b = ngx.req.get_body_data() ` +
		`if not b then local p = ngx.req.get_body_file() if p then local f = io.open(p, "rb") if not f then return ngx.exit(500) end b = f:read(max + 1) f:close() end end ` +
		`b = b or "" if #b > max then return ngx.exit(413) end ngx.var.gw_auth_body = b`
}

// withCopiedHeaders puts headers (the authorization service's answer's)
// in a location's directives: they replace the directives setting the
// same headers, and when the location sets none (it inherits http.conf's
// defaults, which any *_set_header of its own would drop) the defaults
// come first.
func (b *builder) withCopiedHeaders(ds []Directive, prefix string, rewrite *graph.Rewrite, headers []Directive) []Directive {
	if len(headers) == 0 {
		return ds
	}
	set := prefix + "_set_header"
	has := false
	for _, d := range ds {
		has = has || d.Name == set
	}
	if !has {
		ds = append(ds, b.defaultRequestHeaders(prefix, rewrite)...)
	}
	var out []Directive
	for _, d := range ds {
		if d.Name == set && containsHeader(headers, d.Args[0]) {
			continue
		}
		out = append(out, d)
	}
	return append(out, headers...)
}

func containsHeader(headers []Directive, name string) bool {
	for _, h := range headers {
		if strings.EqualFold(h.Args[0], name) {
			return true
		}
	}
	return false
}
