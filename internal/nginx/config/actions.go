package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
)

// actionContext is where an action is rendered.
type actionContext struct {
	port int32
	ssl  bool
	// internal locations were reached by a rewrite; $gw_orig_uri holds the
	// request's path and $request_uri its original form.
	internal bool
}

// action renders what a rule does with a request: redirect, or proxy with
// its filters.
func (b *builder) action(e entry, ctx actionContext, extra map[string]*Location) []Directive {
	f := e.rule.Filters
	grpc := e.rule.H2C
	prefix := "proxy"
	if grpc {
		prefix = "grpc"
	}
	auth, claimHeaders, ok := b.authentication(f.Authentication, prefix)
	if f.Error != "" || !ok {
		// A filter that must process the requests cannot (the statuses
		// say why): never serve them without it.
		return []Directive{D("return", "500")}
	}
	// CORS comes first: a preflight is answered before any rewrite or redirect.
	ds := b.corsDirectives(f.CORS, prefix)
	if f.Redirect != nil {
		return append(ds, D("return", strconv.Itoa(f.Redirect.StatusCode), Quote(b.redirectURL(f.Redirect, e, ctx))))
	}
	// Authentication runs in the access phase, after the rewrites below
	// and before the request is passed on (auth.go).
	access, authHeaders := b.externalAuth(f.ExternalAuth, e.rule.Timeouts, prefix, extra)
	authHeaders = append(claimHeaders, authHeaders...)
	ds = append(append(ds, auth...), access...)
	perBackend := ""
	switch {
	case hasBackendHeaders(e.rule.Backends) && len(e.rule.Backends) == 1:
		f.RequestHeaders = composeHeaders(f.RequestHeaders, e.rule.Backends[0].RequestHeaders)
		ds = append(ds, b.requestHeaders(prefix, f)...)
	case hasBackendHeaders(e.rule.Backends):
		defaults := b.defaultRequestHeaders(prefix, f.Rewrite)
		headers, target := b.perBackendHeaders(prefix+"_set_header", defaults, e.rule, grpc)
		ds = append(append(ds, withoutHeaders(defaults, headers)...), headers...)
		perBackend = target
	case f.RequestHeaders != nil || (f.Rewrite != nil && f.Rewrite.Hostname != ""):
		ds = append(ds, b.requestHeaders(prefix, f)...)
	}
	if f.ResponseHeaders != nil {
		ds = append(ds, responseHeaders(prefix, f.ResponseHeaders)...)
	}
	for _, m := range f.Mirrors {
		if path := b.mirror(m, extra); path != "" {
			ds = append(ds, D("mirror", Quote(path)))
		}
	}
	ds = append(ds, b.timeouts(prefix, e.rule.Timeouts)...)
	ds = append(ds, b.retry(prefix, e.rule.Retry)...)
	target := perBackend
	if target == "" {
		var status int
		if target, status = b.target(e.rule.Backends, grpc); status != 0 {
			return append(ds, D("return", strconv.Itoa(status)))
		}
	}
	rewritesPath := f.Rewrite != nil && f.Rewrite.Path != nil
	switch {
	case rewritesPath:
		if ctx.internal {
			ds = append(ds, D("rewrite", "^", "$gw_orig_uri"))
		}
		ds = append(ds, rewritePath(e, f.Rewrite.Path))
	case ctx.internal && grpc:
		ds = append(ds, D("rewrite", "^", "$gw_orig_uri", "break"))
	case ctx.internal:
		// Pass the request's original URI, not the internal location's path.
		target += "$request_uri"
	}
	if tls := e.rule.TLS; tls != nil {
		ds = append(ds, b.backendTLS(prefix, tls)...)
	}
	ds = b.withCopiedHeaders(ds, prefix, f.Rewrite, authHeaders)
	return append(ds, passDirective(grpc, e.rule.TLS != nil, target))
}

// timeouts renders a rule's timeouts. backendRequest bounds each try
// (NGINX's send and read timeouts: the time between two writes or two
// reads), so that a request whose endpoint stops answering (a pod whose
// packets are dropped, on a connection kept alive) goes on to another
// endpoint after it, when NGINX may send it again; request bounds the
// tries together (the time in which NGINX may pass a request on to
// another endpoint), and each try too when backendRequest is unset. A
// connection attempt takes the Gateway's connect timeout, or the route's
// when that is shorter: a longer one must not let a dead endpoint hold
// requests longer.
func (b *builder) timeouts(prefix string, t graph.Timeouts) []Directive {
	try, all := t.BackendRequest, t.Request
	if try == "" {
		try = all
	}
	if try == "" {
		return nil
	}
	ds := []Directive{D(prefix+"_read_timeout", try), D(prefix+"_send_timeout", try)}
	if all != "" {
		ds = append(ds, D(prefix+"_next_upstream_timeout", all))
	}
	if ms, err := strconv.Atoi(strings.TrimSuffix(try, "ms")); err == nil && int64(ms) < b.cfg.Main.Upstreams.ConnectTimeout.Milliseconds() {
		ds = append(ds, D(prefix+"_connect_timeout", try))
	}
	return ds
}

// RetryTriesVar is the variable a rule with a retry sets to its tries: the
// Lua balancer gives a request that many tries, on the same endpoint again
// when it has tried every other.
const RetryTriesVar = "gw_retry_tries"

// retry renders a rule's retry: the statuses that send a request to another
// try beside NGINX's default (a connection error or timeout, which covers
// backendRequest), and the tries in all. NGINX still never passes a
// non-idempotent request (POST, LOCK, PATCH) again once it was sent: it may
// have been processed. timeouts.request bounds every try together
// (proxy_next_upstream_timeout).
func (b *builder) retry(prefix string, r *graph.Retry) []Directive {
	if r == nil {
		return nil
	}
	on := []string{"error", "timeout"}
	for _, c := range r.Codes {
		on = append(on, "http_"+strconv.Itoa(c))
	}
	tries := strconv.Itoa(r.Tries)
	return []Directive{
		D(prefix+"_next_upstream", on...),
		D(prefix+"_next_upstream_tries", tries),
		D("set", "$"+RetryTriesVar, tries),
	}
}

// target returns the upstream (or split variable) to pass to, or a status
// to answer: 500 when no backend is usable. A backend without endpoints
// has its upstream too, which answers 503 until it has some.
func (b *builder) target(backends []*graph.Backend, h2c bool) (string, int) {
	switch len(backends) {
	case 0:
		return "", 500
	case 1:
		if !backends[0].Valid {
			return "", 500
		}
		return b.upstream(backends[0]), 0
	}
	return b.split(backends, h2c), 0
}

// redirectURL builds a redirect's Location from the request and the filter.
func (b *builder) redirectURL(r *graph.Redirect, e entry, ctx actionContext) string {
	scheme := r.Scheme
	requestScheme := "http"
	if ctx.ssl {
		requestScheme = "https"
	}
	effective := scheme
	if effective == "" {
		effective = requestScheme
	}
	port := r.Port
	switch {
	case port != 0:
	case scheme != "":
		port = wellKnownPort(scheme)
	default:
		port = ctx.port
	}
	if scheme == "" {
		scheme = "$scheme"
	}
	host := r.Hostname
	if host == "" {
		host = "$host"
	}
	portPart := ""
	if port != wellKnownPort(effective) {
		portPart = ":" + strconv.Itoa(int(port))
	}
	path := b.requestPathVar()
	if r.Path != nil {
		if r.Path.ReplacePrefix {
			path = b.prefixReplaced(e.match.Path.Value, r.Path.Value)
		} else {
			path = r.Path.Value
		}
	}
	return scheme + "://" + host + portPart + path + "$is_args$args"
}

func wellKnownPort(scheme string) int32 {
	if scheme == "https" {
		return 443
	}
	return 80
}

// requestPathVar is a variable holding the request's path as the client sent it.
func (b *builder) requestPathVar() string {
	return b.putMap(&Map{
		Source:   "$request_uri",
		Variable: "$gw_request_path",
		Entries:  []MapEntry{{Key: Quote("~^(?<gw_path>[^?]*)"), Value: "$gw_path"}},
		Default:  "/",
	})
}

// prefixReplaced is a variable holding the request path with the matched
// prefix replaced (ReplacePrefixMatch).
func (b *builder) prefixReplaced(prefix, replacement string) string {
	regex, value := prefixRewrite(prefix, replacement)
	return b.addMap(kindRewriteVar, &Map{
		Source:  b.requestPathVar(),
		Entries: []MapEntry{{Key: Quote("~" + regex), Value: Quote(value)}},
		Default: Quote(replacement),
	})
}

// prefixRewrite returns a regex matching the paths under prefix, capturing
// what follows it as gw_rest, and the path with prefix replaced by replacement.
func prefixRewrite(prefix, replacement string) (regex, value string) {
	if len(replacement) > 1 {
		replacement = strings.TrimRight(replacement, "/")
	}
	p := regexp.QuoteMeta(prefix)
	switch {
	case prefix == "/" && replacement == "/":
		return "^(?<gw_rest>/.*)$", "$gw_rest"
	case replacement == "/":
		return "^" + p + "/?(?<gw_rest>.*)$", "/$gw_rest"
	case prefix == "/":
		return "^(?<gw_rest>/.*)$", replacement + "$gw_rest"
	}
	return "^" + p + "(?<gw_rest>/.*)?$", replacement + "$gw_rest"
}

// rewritePath renders a URLRewrite path modifier.
func rewritePath(e entry, p *graph.PathModifier) Directive {
	if !p.ReplacePrefix {
		return D("rewrite", "^", Quote(p.Value), "break")
	}
	regex, value := prefixRewrite(e.match.Path.Value, p.Value)
	return D("rewrite", Quote(regex), Quote(value), "break")
}

// requestHeaders renders the proxied request's headers: Gatewall's defaults
// (repeated, because a location's *_set_header replaces every inherited one)
// and the filter's modifications. A modification of a header Gatewall sets
// replaces its default (names are case-insensitive): NGINX would otherwise
// send both values, and a removed header would still be sent.
func (b *builder) requestHeaders(prefix string, f graph.Filters) []Directive {
	set := prefix + "_set_header"
	ops, names, spelled := opsOf(f.RequestHeaders)
	var user []Directive
	for _, n := range names {
		user = append(user, D(set, spelled[n], b.headerValue(spelled[n], ops[n])))
	}
	return append(withoutHeaders(b.defaultRequestHeaders(prefix, f.Rewrite), user), user...)
}

// defaultRequestHeaders are the headers Gatewall sets on every proxied
// request: Host (the URLRewrite's hostname when it sets one) and, for
// proxy_pass, the forwarding headers the NginxProxy does not disable; the
// loop header (loop.go) and, with tracing, the trace context for both.
func (b *builder) defaultRequestHeaders(prefix string, rewrite *graph.Rewrite) []Directive {
	host := "$gw_host"
	if rewrite != nil && rewrite.Hostname != "" {
		host = Quote(rewrite.Hostname)
	}
	ds := []Directive{D(prefix+"_set_header", "Host", host)}
	if prefix == "proxy" {
		return append(ds, defaultProxyHeaders(b.cfg.Main.Proxy)...)
	}
	ds = append(ds, D(prefix+"_set_header", graph.LoopHeader, "$gw_loop_out"))
	return append(ds, b.cfg.Main.Proxy.traceHeaders(prefix)...)
}

// withoutHeaders returns the header directives of defaults whose header
// (case-insensitive) none of overrides sets.
func withoutHeaders(defaults, overrides []Directive) []Directive {
	set := map[string]bool{}
	for _, o := range overrides {
		set[strings.ToLower(o.Args[0])] = true
	}
	var out []Directive
	for _, dir := range defaults {
		if !set[strings.ToLower(dir.Args[0])] {
			out = append(out, dir)
		}
	}
	return out
}

// defaultProxyHeaders are the request headers every proxied request gets
// (besides Host): the forwarding headers the NginxProxy does not disable
// (disableBaseHeaders), the connection's, the loop header (never
// disabled) and, with tracing, the trace context; http.conf sets them at
// http level for locations that change no header.
func defaultProxyHeaders(p ProxySettings) []Directive {
	var ds []Directive
	for _, h := range []struct{ name, value string }{
		{"X-Forwarded-For", "$proxy_add_x_forwarded_for"},
		{"X-Real-IP", "$remote_addr"},
		{"X-Forwarded-Proto", "$scheme"},
		{"X-Forwarded-Host", "$host"},
		{"X-Forwarded-Port", "$gw_server_port"},
	} {
		if p.baseHeader(h.name) {
			ds = append(ds, D("proxy_set_header", h.name, h.value))
		}
	}
	ds = append(ds,
		D("proxy_set_header", "Upgrade", "$http_upgrade"),
		D("proxy_set_header", "Connection", "$gw_connection"),
		D("proxy_set_header", graph.LoopHeader, "$gw_loop_out"),
	)
	return append(ds, p.traceHeaders("proxy")...)
}

func responseHeaders(prefix string, m *graph.HeaderModifier) []Directive {
	var ds []Directive
	hide := prefix + "_hide_header"
	for _, h := range m.Set {
		ds = append(ds, D(hide, h.Name), D("add_header", h.Name, quoteHeaderValue(h.Value), "always"))
	}
	for _, h := range m.Add {
		ds = append(ds, D("add_header", h.Name, quoteHeaderValue(h.Value), "always"))
	}
	for _, name := range m.Remove {
		ds = append(ds, D(hide, name))
	}
	return ds
}

// mirror registers the internal location a mirror sends copies to. A
// mirror of a share of requests passes through a split whose other share
// goes to a sink that answers 204 at once, so those requests are not copied.
func (b *builder) mirror(m *graph.Mirror, extra map[string]*Location) string {
	be := m.Backend
	if !be.Valid || m.Basis <= 0 {
		return ""
	}
	up := b.upstream(be)
	target, path := up, fmt.Sprintf("%smirror/%s", InternalPrefix, up)
	h2c := be.Protocol == graph.ProtocolH2C
	if m.Basis < 10000 {
		sink := b.sinkFor(204, h2c)
		s := &Split{Buckets: []SplitBucket{{Basis: m.Basis, Upstream: up}, {Basis: 10000 - m.Basis, Upstream: sink}}}
		target, path = b.addSplit(kindMirrorVar, s), fmt.Sprintf("%s/%d", path, m.Basis)
	}
	var tlsDirectives []Directive
	if be.TLS != nil {
		prefix := "proxy"
		if h2c {
			prefix = "grpc"
		}
		tlsDirectives = b.backendTLS(prefix, be.TLS)
	}
	if be.ExternalName != "" {
		// The copies carry the name an ExternalName Service is known by
		// as Host, as the requests its routes send it do (graph's
		// externalNameHosts); a location's *_set_header replaces every
		// inherited one, so Gatewall's others are repeated.
		prefix := "proxy"
		if h2c {
			prefix = "grpc"
		}
		tlsDirectives = append(b.defaultRequestHeaders(prefix, &graph.Rewrite{Hostname: be.ExternalName}), tlsDirectives...)
	}
	loc := &Location{Modifier: "=", Path: path, Internal: true,
		Directives: append(tlsDirectives, passDirective(false, be.TLS != nil, target+"$request_uri"))}
	if h2c {
		// grpc_pass takes no URI: send the request's path, not the mirror
		// location's (the subrequest keeps the request's arguments).
		loc.Directives = append(append([]Directive{D("rewrite", "^", b.requestPathVar(), "break")}, tlsDirectives...), passDirective(true, be.TLS != nil, target))
	}
	extra[path] = loc
	return path
}
