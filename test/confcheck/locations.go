package confcheck

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// The checks of what a location does with a request: its path, its
// conditions, answers, redirects, rewrites, mirrors and passes.

// location checks a location's path: a route's match (a path Exact and
// PathPrefix matches may have, or a regular expression), an internal
// location, or the named location for refused client certificates.
func location(c *checker, d *Directive) {
	mod, path := "", d.Args[0].Value
	if len(d.Args) == 2 {
		mod, path = d.Args[0].Value, d.Args[1].Value
	}
	c.locationPath = path
	switch mod {
	case "":
		if path == "@_gatewall_client_cert_refused" {
			return
		}
		// A PathPrefix match's location: its path and a '/'.
		if path != "/" {
			path = strings.TrimSuffix(path, "/")
		}
		checkPath(c, d, path)
	case "=":
		if c.server != nil {
			if c.server.locations[path] {
				c.fail(d, "duplicate location %q", path)
			}
			c.server.locations[path] = true
		}
		c.locations[path] = true
		if strings.HasPrefix(path, config.InternalPrefix) {
			if !hasDirective(d.Block, "internal") {
				c.fail(d, "location %q has the internal prefix but is not internal", path)
			}
			return
		}
		checkPath(c, d, path)
	case "~":
		if err := validation.RegexPath(path); err != nil && !grpcMethodRegex(path) {
			c.fail(d, "location: %v", err)
		}
	default:
		c.fail(d, "location modifier %q", mod)
	}
}

// grpcMethodRegex says whether a location regex is a gRPC method match,
// ^/(service)/(method)$ with either part [^/]+ for any, each part a
// regular expression that passes validation.
func grpcMethodRegex(re string) bool {
	inner, prefixed := strings.CutPrefix(re, "^/")
	inner, suffixed := strings.CutSuffix(inner, "$")
	if !prefixed || !suffixed {
		return false
	}
	part := func(p string) bool {
		if p == "[^/]+" {
			return true
		}
		body, opened := strings.CutPrefix(p, "(")
		body, closed := strings.CutSuffix(body, ")")
		if !opened || !closed {
			return false
		}
		return validation.RegexValue("gRPC method match", body) == nil
	}
	for i := 0; i < len(inner); i++ {
		if inner[i] == '/' && part(inner[:i]) && part(inner[i+1:]) {
			return true
		}
	}
	return false
}

func checkPath(c *checker, d *Directive, path string) {
	if err := validation.MatchPath(path); err != nil {
		c.fail(d, "location: %v", err)
	}
}

func hasDirective(ds []*Directive, name string) bool {
	for _, d := range ds {
		if d.Name == name {
			return true
		}
	}
	return false
}

// ifCondition is "(" $variable ")" or "(" $variable "!=" "value" ")".
func ifCondition(c *checker, d *Directive) {
	v := d.values()
	first := strings.TrimPrefix(v[0], "(")
	last := v[len(v)-1]
	if first == v[0] || !strings.HasSuffix(last, ")") {
		c.fail(d, "if condition %q is not parenthesized", strings.Join(v, " "))
		return
	}
	first = strings.TrimSuffix(first, ")")
	c.variablesIn(d, first)
	if len(v) > 1 && v[1] != "!=" {
		c.fail(d, "if operator %q", v[1])
	}
}

var codes = map[string]bool{"204": true, "404": true, "421": true, "444": true, "500": true, "503": true, "508": true,
	"301": true, "302": true, "303": true, "307": true, "308": true}

func returnDirective(c *checker, d *Directive) {
	if c.ctx == ctxStreamServer {
		// The server closing TLS connections nothing claims.
		if len(d.Args) != 1 || d.Args[0].Value != "" {
			c.fail(d, "stream return %q", d.Args[0].Value)
		}
		return
	}
	code := d.Args[0].Value
	if !codes[code] {
		c.fail(d, "return code %q", code)
	}
	if len(d.Args) == 2 {
		if code[0] != '3' {
			c.fail(d, "return %s with a URL", code)
		}
		redirectURL(c, d, d.Args[1].Value)
	}
}

// redirectURLRE splits a redirect's Location: scheme, host, port, path,
// then the request's arguments.
var redirectURLRE = regexp.MustCompile(`^(\$scheme|https?)://([^/:]+)(?::([0-9]+))?(/.*|\$[a-z_0-9]+)\$is_args\$args$`)

func redirectURL(c *checker, d *Directive, u string) {
	m := redirectURLRE.FindStringSubmatch(u)
	if m == nil {
		c.fail(d, "redirect URL %q", u)
		return
	}
	if m[2] != "$host" {
		if err := validation.ExactHostname(m[2]); err != nil {
			c.fail(d, "redirect: %v", err)
		}
	}
	if n, err := strconv.Atoi(m[3]); m[3] != "" && (err != nil || n < 1 || n > 65535) {
		c.fail(d, "redirect port %q", m[3])
	}
	if strings.HasPrefix(m[4], "$") {
		c.variablesIn(d, m[4])
	} else if err := validation.Path(m[4]); err != nil {
		c.fail(d, "redirect: %v", err)
	}
	c.variablesIn(d, u)
}

// rewrite is "^ replacement [break|last]", or a prefix replacement:
// "regex" "replacement$gw_rest" break.
func rewrite(c *checker, d *Directive) {
	regex, repl := d.Args[0].Value, d.Args[1].Value
	if len(d.Args) == 3 && d.Args[2].Value != "break" && d.Args[2].Value != "last" {
		c.fail(d, "rewrite flag %q", d.Args[2].Value)
	}
	if regex != "^" {
		prefixRegex(c, d, regex)
	}
	switch {
	case strings.HasPrefix(repl, "$"):
		c.variablesIn(d, repl)
	default:
		literal, _ := strings.CutSuffix(repl, "$gw_rest")
		if literal != "" && literal != "/" {
			if err := validation.Path(literal); err != nil {
				c.fail(d, "rewrite: %v", err)
			}
		}
		c.variablesIn(d, repl)
	}
}

// mirror sends copies to an internal location of its server.
func mirror(c *checker, d *Directive) {
	p := d.Args[0].Value
	if !strings.HasPrefix(p, config.InternalPrefix+"mirror/") {
		c.fail(d, "mirror to %q, not an internal mirror location", p)
	}
	c.useLocation(d, p)
}

// pass is proxy_pass or grpc_pass to an upstream or a variable naming one,
// optionally with the request URI.
func pass(schemes ...string) func(*checker, *Directive) {
	return func(c *checker, d *Directive) {
		target := d.Args[0].Value
		if c.ctx == ctxStreamServer {
			switch {
			case strings.HasPrefix(target, "unix:"+config.RunDir+"port-"), strings.HasPrefix(target, "$gw_tlsport_"), strings.HasPrefix(target, "$gw_tls_split_"),
				strings.HasPrefix(target, "$gw_l4_split_"):
				c.variablesIn(d, target)
			case target == "unix:"+config.RunDir+"tls-reject.sock":
				// A TCP listener with no backend to pass to closes its connections.
			case strings.HasPrefix(target, "tls_"), strings.HasPrefix(target, "l4_"), target == udpClosed:
				c.use(d, "upstream", target)
			default:
				c.fail(d, "stream proxy_pass %q", target)
			}
			return
		}
		scheme := ""
		for _, s := range schemes {
			if strings.HasPrefix(target, s) {
				scheme = s
			}
		}
		if scheme == "" {
			c.fail(d, "%s %q: scheme is not one of %q", d.Name, target, schemes)
			return
		}
		name := strings.TrimSuffix(strings.TrimPrefix(target, scheme), "$request_uri")
		if up, prefix, ok := strings.Cut(name, "/"); ok && strings.HasPrefix(c.locationPath, config.InternalPrefix+"auth/") {
			// An authorization location puts the filter's path prefix
			// before the request's URI.
			if err := validation.Path("/" + prefix); err != nil || !strings.HasSuffix(target, "$request_uri") {
				c.fail(d, "%s %q: the path prefix: %v", d.Name, target, err)
			}
			name = up
		}
		if strings.HasPrefix(name, "$") {
			c.variablesIn(d, name)
			return
		}
		c.use(d, "upstream", name)
	}
}
