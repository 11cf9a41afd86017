package confcheck

import (
	"github.com/gatewall/gatewall/internal/jwks"

	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// Contexts a directive can be in.
const (
	ctxMain         = "main"
	ctxEvents       = "events"
	ctxHTTP         = "http"
	ctxServer       = "server"
	ctxLocation     = "location"
	ctxIf           = "if"
	ctxUpstream     = "upstream"
	ctxStream       = "stream"
	ctxStreamServer = "stream server"
)

// maxErrors bounds what one Check reports.
const maxErrors = 20

// checker is one Check in progress.
type checker struct {
	files  map[string][]byte
	parsed map[string][]*Directive
	// reached are the files included or referred to.
	reached map[string]bool
	errs    []error

	// Definitions, and references checked once everything is read.
	variables map[string]bool
	upstreams map[string]bool
	// listening are the addresses listened on; workerConnections and
	// rlimitNofile the main context's budgets.
	listening                       map[string]bool
	workerConnections, rlimitNofile int
	// l4Connections are what the TCP and UDP listeners' limit_conn let
	// their clients hold of a worker's connections.
	l4Connections int
	// sessionZones are the TLS session caches' zones and sizes.
	sessionZones map[string]int64
	// locations are the exact locations of every server, internal or not.
	locations map[string]bool
	// zones are the zones snippets declare; snippets the snippet files
	// read, each checked once in each context.
	zones    map[string]bool
	snippets map[string]bool
	uses     []use
	// server is the server block being read (nil outside one).
	server *server
	// ctx is the context of the directive being checked.
	ctx string
	// locationPath is the path of the location block being read.
	locationPath string
	// upstream names the upstream block being read.
	upstream string
	// upstreamIn is the context of that upstream block: http or stream.
	upstreamIn string
	// policies are the JWT policies file's, read once (jwt.go).
	policies jwks.Policies
}

// use is a reference to something defined elsewhere.
type use struct {
	kind, name string
	at         *Directive
	// in is the server a location must be in (nil: any).
	in *server
}

// server is what one server block defines, for checks inside it.
type server struct {
	locations map[string]bool
	// listens are the addresses of the listen directives read so far.
	listens []string
}

// Check reads a Gateway's rendered files from nginx.conf and returns every
// way they break the renderer's promises (at most 20), or nil.
func Check(files []config.File) error {
	c := &checker{files: map[string][]byte{}, parsed: map[string][]*Directive{}, reached: map[string]bool{},
		variables: map[string]bool{}, upstreams: map[string]bool{}, locations: map[string]bool{}, listening: map[string]bool{},
		sessionZones: map[string]int64{}, zones: map[string]bool{}, snippets: map[string]bool{}}
	for _, f := range files {
		if _, dup := c.files[f.Path]; dup {
			c.fail(nil, "file %s is rendered twice", f.Path)
		}
		c.files[f.Path] = f.Data
	}
	ds := c.include(nil, config.MainConfPath)
	c.walk(ds, ctxMain)
	c.resolve()
	c.budgets()
	for _, p := range sortedPaths(c.files) {
		if !c.reached[p] && !routePolicyFile(p) {
			c.fail(nil, "file %s is rendered but nothing refers to it", p)
		}
	}
	if len(c.errs) > maxErrors {
		c.errs = append(c.errs[:maxErrors], fmt.Errorf("and %d more", len(c.errs)-maxErrors))
	}
	return errors.Join(c.errs...)
}

func sortedPaths(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (c *checker) fail(at *Directive, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if at != nil {
		msg = at.String() + ": " + msg
	}
	c.errs = append(c.errs, errors.New(msg))
}

// routePolicyFile says whether a file is a route's policy include file or a
// WAF bundle. Policies render them for every route attached to the
// Gateway, also when no location serves the route (it attached only to
// listeners that are not configured, or a more specific listener serves
// its hostnames), so nothing may refer to them.
func routePolicyFile(path string) bool {
	rest, ok := strings.CutPrefix(path, config.IncludesDir)
	return ok && strings.Contains(rest, "/") || strings.HasPrefix(path, bundlesDir)
}

// bundlesDir holds WAF bundles (policy.BundlesDir; package policy is not
// imported, the checker only knows the rendered files).
const bundlesDir = "/etc/app_protect/bundles/"

// include parses a rendered file, once, and marks it reached.
func (c *checker) include(at *Directive, path string) []*Directive {
	c.reached[path] = true
	if ds, ok := c.parsed[path]; ok {
		return ds
	}
	data, ok := c.files[path]
	if !ok {
		c.fail(at, "refers to %s, which is not rendered", path)
		return nil
	}
	ds, err := Parse(path, data)
	if err != nil {
		c.fail(at, "%v", err)
	}
	c.parsed[path] = ds
	return ds
}

// refer marks a file a directive refers to as reached; it must be rendered
// unless it is one of the data plane's own files.
func (c *checker) refer(at *Directive, path string) {
	if systemFiles[path] {
		return
	}
	if _, ok := c.files[path]; !ok {
		c.fail(at, "refers to %s, which is not rendered", path)
	}
	c.reached[path] = true
}

// walk checks directives in a context.
func (c *checker) walk(ds []*Directive, ctx string) {
	for _, d := range ds {
		switch {
		case d.Name == "include" && len(d.Args) == 1 && d.Block == nil && snippetFile(d.Args[0].Value):
			c.snippet(d, d.Args[0].Value, ctx)
			continue
		case d.Name == "include" && len(d.Args) == 1 && d.Block == nil:
			c.walk(c.include(d, d.Args[0].Value), ctx)
			continue
		case d.Name == "server":
			c.serverDirective(d, ctx)
			continue
		}
		r, ok := rules[d.Name]
		if !ok || d.NameQuoted {
			c.fail(d, "directive %q is not one Gatewall renders", d.Name)
			continue
		}
		if !contains(r.ctx, ctx) {
			c.fail(d, "directive %q in %s context", d.Name, ctx)
			continue
		}
		if len(d.Args) < r.min || len(d.Args) > r.max {
			c.fail(d, "directive %q has %d arguments, not %d to %d", d.Name, len(d.Args), r.min, r.max)
			continue
		}
		if (d.Block != nil) != (r.block != "") {
			c.fail(d, "directive %q: a block where none belongs, or none where one does", d.Name)
			continue
		}
		if r.check != nil {
			c.ctx = ctx
			r.check(c, d)
		}
		switch r.block {
		case "":
		case "body":
			// map, split_clients and geo bodies are read by their check.
		default:
			if r.block == ctxUpstream {
				c.upstream, c.upstreamIn = d.Args[0].Value, ctx
			}
			c.walk(d.Block, r.block)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// resolve checks every reference against what is defined.
func (c *checker) resolve() {
	for _, u := range c.uses {
		switch u.kind {
		case "variable":
			if !c.variables[u.name] && !builtinVariable(u.name) {
				c.fail(u.at, "unknown variable $%s", u.name)
			}
		case "upstream":
			if !c.upstreams[u.name] {
				c.fail(u.at, "upstream %q is not defined", u.name)
			}
		case "zone":
			if !c.zones[u.name] {
				c.fail(u.at, "zone %q is not declared", u.name)
			}
		case "location":
			defined := c.locations
			if u.in != nil {
				defined = u.in.locations
			}
			if !defined[u.name] {
				c.fail(u.at, "internal location %q is not defined", u.name)
			}
		}
	}
}

func (c *checker) use(at *Directive, kind, name string) {
	c.uses = append(c.uses, use{kind: kind, name: name, at: at})
}

// useLocation records a reference to an exact location of the server
// being read: a subrequest (mirror) stays in its server.
func (c *checker) useLocation(at *Directive, path string) {
	c.uses = append(c.uses, use{kind: "location", name: path, at: at, in: c.server})
}

// define records a variable a directive sets (set, js_var: any number of
// times).
func (c *checker) define(at *Directive, v string) {
	name, ok := strings.CutPrefix(v, "$")
	if !ok || !validVariableName(name) {
		c.fail(at, "%q is not a variable", v)
		return
	}
	c.variables[name] = true
}

// defineOnce records the variable of a map or split_clients block. NGINX
// lets a second block of the same variable silently replace the first, so
// two are always a defect.
func (c *checker) defineOnce(at *Directive, v string) {
	if c.variables[strings.TrimPrefix(v, "$")] {
		c.fail(at, "variable %s is defined twice", v)
	}
	c.define(at, v)
}
