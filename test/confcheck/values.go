package confcheck

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/internal/validation"
)

var (
	variableNameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	// variableRE finds the variables of a value NGINX interpolates.
	variableRE = regexp.MustCompile(`\$(\{[A-Za-z0-9_]*\}|[A-Za-z0-9_]*)`)
)

func validVariableName(s string) bool { return variableNameRE.MatchString(s) }

// builtins are the NGINX variables the renderer uses.
var builtins = map[string]bool{"host": true, "request_uri": true, "uri": true, "args": true, "is_args": true, "scheme": true,
	"remote_addr": true, "proxy_add_x_forwarded_for": true, "server_port": true, "proxy_protocol_server_port": true,
	"request_method": true, "request_id": true, "ssl_server_name": true,
	"ssl_preread_server_name": true, "proxy_protocol_addr": true, "proxy_protocol_port": true, "remote_port": true,
	"ssl_protocol": true, "ssl_curve": true}

func builtinVariable(name string) bool {
	// The access log's variables are NGINX's, but for the trace's, which
	// the renderer's maps define (nginx/config/tracing.go).
	logged := syntax.LogVariable(name) && !strings.HasPrefix(name, "otel_")
	return builtins[name] || logged || syntax.ValueVariable(name) || strings.HasPrefix(name, "http_") && len(name) > len("http_") ||
		strings.HasPrefix(name, "upstream_http_") && len(name) > len("upstream_http_")
}

// variablesIn records the variables of a value NGINX interpolates; a '$'
// that starts no variable name is an error, as it is to NGINX.
func (c *checker) variablesIn(d *Directive, v string) {
	for _, m := range variableRE.FindAllStringSubmatch(v, -1) {
		name := strings.Trim(m[1], "{}")
		if name == "" {
			c.fail(d, "%q has a '$' that starts no variable", v)
			continue
		}
		c.use(d, "variable", name)
	}
}

var (
	// ownVariableRE is a value that is one of the renderer's variables
	// alone (Gatewall's defaults, a map's variable, the client's header).
	ownVariableRE = regexp.MustCompile(`^\$[a-z_][a-z0-9_]*$`)
	// appendedRE starts a value appended to the request's own header.
	appendedRE = regexp.MustCompile(`^\$http_[a-z0-9_]+,`)
)

// headerValueExpr checks a header's value: the renderer's own (empty: it
// removes a request header, or is a map's value when no header is set;
// one of its variables alone), or a user's value written as
// syntax.HeaderValue writes it, possibly after the request's own value
// ("$http_<name>,": an added header). A user's value reads variables with
// braces only, each one of syntax.ValueVariable's or the literal '$'
// variable, and the value it stands for (possibly a rule's and a
// backend's values joined by a comma) must be a valid header value.
func headerValueExpr(c *checker, d *Directive, a Arg) {
	v := a.Value
	if v == "" {
		return
	}
	c.variablesIn(d, v)
	if ownVariableRE.MatchString(v) {
		return
	}
	if m := appendedRE.FindString(v); m != "" {
		v = v[len(m):]
	}
	user, ok := syntax.ReadHeaderValue(v)
	if !ok {
		c.fail(d, "%s: %q reads a variable a header value may not read, or a '$' that is not ${%s}", d.Name, v, syntax.DollarVariable)
		return
	}
	if err := validation.HeaderValue(user); err != nil {
		c.fail(d, "%s: %v", d.Name, err)
	}
}

// geoBlock is the declaration of the variable holding a literal '$'
// (nginx/config writeDollar): its only value.
func geoBlock(c *checker, d *Directive) {
	c.defineOnce(d, d.Args[0].Value)
	if d.Args[0].Value != "$"+syntax.DollarVariable || len(d.Block) != 1 || d.Block[0].Name != "default" ||
		d.Block[0].NameQuoted || len(d.Block[0].Args) != 1 || d.Block[0].Args[0].Value != "$" || d.Block[0].Block != nil {
		c.fail(d, "geo: not the declaration of $%s, whose value is \"$\"", syntax.DollarVariable)
	}
}

// upstreamRE is an upstream's name: svc_namespace_service_port (tls_ in
// the stream context), with _h2c for the one spoken to with HTTP/2.
var upstreamRE = regexp.MustCompile(`^(?:svc|tls|l4)_([^_]+)_([^_]+)_([0-9]+)(_h2c)?$`)

// udpClosed is the stream upstream that drops a UDP backend's datagrams
// when it cannot serve: its one server is down.
const udpClosed = "gatewall_udp_closed"

func upstreamBlock(c *checker, d *Directive) {
	name := d.Args[0].Value
	if c.upstreams[name] {
		c.fail(d, "upstream %q is defined twice", name)
	}
	c.upstreams[name] = true
	if strings.HasPrefix(name, "gatewall_sink_") {
		return
	}
	if name == udpClosed {
		if c.ctx != ctxStream || len(d.Block) != 1 || d.Block[0].Name != "server" || strings.Join(d.Block[0].values(), " ") != "127.0.0.1:9 down" {
			c.fail(d, "upstream %q is not a stream upstream of one server that is down", name)
		}
		return
	}
	m := upstreamRE.FindStringSubmatch(name)
	if m == nil || (strings.HasPrefix(name, "tls_") || strings.HasPrefix(name, "l4_")) != (c.ctx == ctxStream) {
		c.fail(d, "upstream name %q is not svc_namespace_service_port (tls_ or l4_ in the stream context)", name)
		return
	}
	if err := validation.ObjectReference(m[1], m[2]); err != nil {
		c.fail(d, "upstream %q: %v", name, err)
	}
	if !hasDirective(d.Block, "server") {
		// NGINX refuses an upstream without servers.
		c.fail(d, "upstream %q has no server", name)
	}
	if c.ctx == ctxHTTP && !hasDirective(d.Block, "balancer_by_lua_block") {
		c.fail(d, "upstream %q: an http upstream's endpoints come from the Lua balancer", name)
	}
}

// failTimeoutRE is a stream endpoint's parameter, in whole seconds.
var failTimeoutRE = regexp.MustCompile(`^fail_timeout=[1-9][0-9]*s$`)

// upstreamServer is a sink's socket (a sink's own upstream, or a dynamic
// upstream's fallback), or, in the stream context, an endpoint (IP:port,
// IPv6 in brackets) with its fail_timeout.
func upstreamServer(c *checker, d *Directive) {
	addr := d.Args[0].Value
	if c.upstream == udpClosed {
		return // upstreamBlock checked it
	}
	if strings.HasPrefix(addr, "unix:") {
		sink := strings.HasPrefix(c.upstream, "gatewall_sink_")
		if !strings.HasPrefix(addr, "unix:/var/run/nginx/sink-") ||
			(sink && len(d.Args) != 1) || (!sink && (len(d.Args) != 2 || d.Args[1].Value != "max_fails=0")) {
			c.fail(d, "upstream server %q", d.values())
		}
		return
	}
	if c.upstreamIn != ctxStream {
		c.fail(d, "upstream server %q: an http upstream lists no endpoints", addr)
	}
	host, port, ok := strings.Cut(addr, "]:")
	if ok {
		host = strings.TrimPrefix(host, "[")
	} else {
		host, port, _ = strings.Cut(addr, ":")
	}
	if _, err := netip.ParseAddr(host); err != nil || strings.Contains(host, "%") {
		c.fail(d, "upstream server %q: not an IP address", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		c.fail(d, "upstream server %q: port", addr)
	}
	if len(d.Args) != 2 || !failTimeoutRE.MatchString(d.Args[1].Value) {
		c.fail(d, "upstream server %q: parameters", addr)
	}
}

// securityLog is a log profile bundle and a destination: stderr, a file
// in /var/log/app_protect/, or syslog:server=host:port.
func securityLog(c *checker, d *Directive) {
	c.refer(d, d.Args[0].Value)
	dest := d.Args[1].Value
	p := field.NewPath("destination")
	switch {
	case dest == "stderr":
	case strings.HasPrefix(dest, "syslog:server="):
		if errs := validation.SyslogServer(p, strings.TrimPrefix(dest, "syslog:server=")); len(errs) > 0 {
			c.fail(d, "security log: %v", errs.ToAggregate())
		}
	default:
		file := v1alpha1.SecurityLogDestination{Type: v1alpha1.SecurityLogDestinationFile, File: &v1alpha1.FileDestination{Path: dest}}
		if errs := validation.SecurityLogDestination(p, file); len(errs) > 0 {
			c.fail(d, "security log: %v", errs.ToAggregate())
		}
	}
}

// prefixRegex is a generated regex replacing a path prefix: it must
// compile, and the prefix in it must be a path a PathPrefix match may have.
func prefixRegex(c *checker, d *Directive, re string) {
	if _, err := regexp.Compile(re); err != nil {
		c.fail(d, "regex %q does not compile: %v", re, err)
		return
	}
	for _, m := range namedGroupRE.FindAllStringSubmatch(re, -1) {
		c.define(d, "$"+m[1])
	}
	prefix := re[1:]
	if i := strings.Index(prefix, "(?<gw_rest>"); i >= 0 {
		prefix = prefix[:i]
	}
	prefix = strings.TrimSuffix(prefix, "/?")
	if prefix == "" {
		return
	}
	if err := validation.MatchPath(unquoteMeta(prefix)); err != nil {
		c.fail(d, "prefix in %q: %v", re, err)
	}
}

// unquoteMeta undoes regexp.QuoteMeta.
func unquoteMeta(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isQuoteMeta says whether s is the output of regexp.QuoteMeta.
func isQuoteMeta(s string) bool { return regexp.QuoteMeta(unquoteMeta(s)) == s }
