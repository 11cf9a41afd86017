package confcheck

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/internal/validation"
)

// The directives of the NginxProxy's NGINX-facing settings
// (nginx/config/nginxproxy.go, realip.go, tracing.go).
func init() {
	for name, r := range map[string]rule{
		"server_tokens": {ctx: http, min: 1, max: 1, check: oneOfArgs("off", "on", "build")},
		"access_log":    {ctx: []string{ctxHTTP, ctxServer}, min: 1, max: 2, check: accessLog},
		"log_format":    {ctx: http, min: 2, max: 32, check: logFormat},

		"gzip":              {ctx: http, min: 1, max: 1, check: oneOfArgs("on")},
		"gzip_comp_level":   {ctx: http, min: 1, max: 1, check: number(1, 9)},
		"gzip_min_length":   {ctx: http, min: 1, max: 1, check: number(0, 1<<31-1)},
		"gzip_buffers":      {ctx: http, min: 2, max: 2, check: gzipBuffers},
		"gzip_http_version": {ctx: http, min: 1, max: 1, check: oneOfArgs("1.0", "1.1")},
		"gzip_types":        {ctx: http, min: 1, max: 32, check: gzipTypes},
		"gzip_proxied":      {ctx: http, min: 1, max: 9, check: gzipProxied},
		"gzip_disable":      {ctx: http, min: 1, max: 16, check: gzipDisable},
		"gzip_vary":         {ctx: http, min: 1, max: 1, check: oneOfArgs("on")},

		// The stream module's servers trust unix: (their front); the
		// NginxProxy's trusted peers at http and stream level.
		"set_real_ip_from":  {ctx: []string{ctxHTTP, ctxServer, ctxStream}, min: 1, max: 1, check: realIPFrom},
		"real_ip_header":    {ctx: []string{ctxHTTP, ctxServer}, min: 1, max: 1, check: realIPHeader},
		"real_ip_recursive": {ctx: http, min: 1, max: 1, check: oneOfArgs("on")},
	} {
		rules[name] = r
	}
}

// accessLog: off, or standard output in NGINX's format or Gatewall's.
func accessLog(c *checker, d *Directive) {
	switch v := strings.Join(d.values(), " "); v {
	case "off", "/dev/stdout":
	case "/dev/stdout gatewall":
		if c.ctx != ctxHTTP {
			c.fail(d, "access_log %s in %s", v, c.ctx)
		}
	default:
		c.fail(d, "access_log %s", v)
	}
}

// logFormat: Gatewall's format, its escaping, then strings each within one
// token whose variables are the access log's allow-list's
// (syntax.LogFormat), the literal '$' or the trace's.
func logFormat(c *checker, d *Directive) {
	args := d.Args
	if args[0].Value != "gatewall" {
		c.fail(d, "log_format %q", args[0].Value)
	}
	args = args[1:]
	if e, ok := strings.CutPrefix(args[0].Value, "escape="); ok {
		if !contains([]string{"default", "json", "none"}, e) {
			c.fail(d, "log_format escape %q", e)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		c.fail(d, "log_format without a format")
	}
	for _, a := range args {
		if err := syntax.CheckToken("log format", a.Value); err != nil {
			c.fail(d, "%v", err)
		}
		for _, m := range variableRE.FindAllStringSubmatch(a.Value, -1) {
			braced := strings.HasPrefix(m[1], "{")
			name := strings.Trim(m[1], "{}")
			if !braced || !(syntax.LogVariable(name) || name == syntax.DollarVariable) {
				c.fail(d, "log format reads %q: not ${name} of the access log's variables", m[0])
			}
		}
		c.variablesIn(d, a.Value)
	}
}

var gzipSizeRE = regexp.MustCompile(`^[1-9][0-9]*$`)

// gzipBuffers: a number and a size in bytes, within 2m for a response.
func gzipBuffers(c *checker, d *Directive) {
	n, err1 := strconv.Atoi(d.Args[0].Value)
	size, err2 := strconv.Atoi(d.Args[1].Value)
	if err1 != nil || err2 != nil || !gzipSizeRE.MatchString(d.Args[1].Value) || n < 1 || n > 256 || n*size > 2<<20 {
		c.fail(d, "gzip_buffers %s", strings.Join(d.values(), " "))
	}
}

// gzipTypes: MIME types (the CRD's pattern, lower case, no repeat, not
// text/html) that NGINX's fixed table holds.
func gzipTypes(c *checker, d *Directive) {
	types := d.values()
	if got := syntax.GzipTypes(types); strings.Join(got, " ") != strings.Join(types, " ") {
		c.fail(d, "gzip_types %v: not lower case without repeats and text/html", types)
	}
	re := regexp.MustCompile(validation.MimeTypePattern)
	for _, t := range types {
		if !re.MatchString(t) {
			c.fail(d, "gzip_types %q: not a MIME type", t)
		}
	}
	if err := syntax.CheckGzipTypes(types); err != nil {
		c.fail(d, "gzip_types: %v", err)
	}
}

func gzipProxied(c *checker, d *Directive) {
	seen := map[string]bool{}
	for _, v := range d.values() {
		if seen[v] || !contains([]string{"off", "expired", "no-cache", "no-store", "private", "no_last_modified", "no_etag", "auth", "any"}, v) {
			c.fail(d, "gzip_proxied %q", v)
		}
		seen[v] = true
	}
}

func gzipDisable(c *checker, d *Directive) {
	for _, v := range d.values() {
		if err := validation.RegexValue("gzip_disable", v); err != nil {
			c.fail(d, "%v", err)
		}
	}
}

// realIPFrom: unix: in a server behind the stream module, an address or a
// CIDR (host bits cleared) of the NginxProxy's at http and stream level.
func realIPFrom(c *checker, d *Directive) {
	v := d.Args[0].Value
	if c.ctx == ctxServer {
		oneOfArgs("unix:")(c, d)
		return
	}
	if a, err := netip.ParseAddr(v); err == nil && a.String() == v {
		return
	}
	if p, err := netip.ParsePrefix(v); err == nil && p.Masked().String() == v {
		return
	}
	c.fail(d, "set_real_ip_from %q: not an address or a CIDR", v)
}

func realIPHeader(c *checker, d *Directive) {
	if c.ctx == ctxServer {
		oneOfArgs("proxy_protocol")(c, d)
		return
	}
	oneOfArgs("proxy_protocol", "X-Forwarded-For")(c, d)
}

// traceparentValue: the traceparent sent on, the client's or one made from
// the request's ID.
func traceparentValue(c *checker, d *Directive, v Arg) {
	fixedValue("$http_traceparent", "00-${gw_trace_new}-${gw_span_new}-01")(c, d, v)
	c.variablesIn(d, v.Value)
}
