package snippets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/syntax"
)

// Scope is whose snippets they are, which decides where they may change
// anything.
type Scope int

const (
	// GatewayScope is a SnippetsPolicy's: the Gateway's owner's (the
	// policy is in the Gateway's namespace). Its http.server and
	// http.server.location snippets change every route of the Gateway.
	GatewayScope Scope = iota
	// RuleScope is a SnippetsFilter's: a route owner's. Only its location
	// snippet, in the locations of the rules that name it, may change
	// anything; its other snippets would change other teams' routes, so
	// they may only declare.
	RuleScope
)

// maxDirectives is the most directives one snippet may hold, blocks'
// included.
const maxDirectives = 64

// Checked are one object's snippets, read and allowed.
type Checked struct {
	// directives are each context's, as read.
	directives map[v1alpha1.NginxContext][]syntax.Directive
	// Zones are the zones the object declares, in the order declared.
	Zones []Zone
}

// Zone is a shared memory zone a snippet declares: its name as the snippet
// writes it, and its size.
type Zone struct {
	Name  string
	Bytes int64
}

// ZoneBytes is the memory of the object's zones.
func (c *Checked) ZoneBytes() int64 {
	var n int64
	for _, z := range c.Zones {
		n += z.Bytes
	}
	return n
}

// Empty says whether no context has a directive (a snippet of comments).
func (c *Checked) Empty() bool { return len(c.directives) == 0 }

// Has says whether a context has directives.
func (c *Checked) Has(ctx v1alpha1.NginxContext) bool { return len(c.directives[ctx]) > 0 }

// Render returns a context's directives as they are to be written: zone
// names replaced with rename's (each object's zones are its own).
func (c *Checked) Render(ctx v1alpha1.NginxContext, rename func(zone string) string) []syntax.Directive {
	return render(c.directives[ctx], rename)
}

func render(ds []syntax.Directive, rename func(string) string) []syntax.Directive {
	out := make([]syntax.Directive, 0, len(ds))
	for _, d := range ds {
		r := allowed[d.Name]
		args := append([]string(nil), d.Args...)
		if r.zones != nil {
			args = r.zones(args, rename)
		}
		nd := syntax.Directive{Name: d.Name, Args: args, Line: d.Line}
		if d.Block != nil {
			nd.Block = render(d.Block, rename)
		}
		out = append(out, nd)
	}
	return out
}

// Singles are the directives of a context that NGINX takes once per block
// (top level; a block's own are its own), by what makes two the same:
// where the contexts of two objects meet, they must not share one. Those
// on a zone (limit_conn) are left out: each object's zones are its own,
// so two objects' never name the same.
func (c *Checked) Singles(ctx v1alpha1.NginxContext) []string {
	var out []string
	for _, d := range c.directives[ctx] {
		if r := allowed[d.Name]; r.single && r.zones == nil {
			out = append(out, singleKey(d.Name, r, d.Args))
		}
	}
	slices.Sort(out)
	return out
}

// Check reads an object's snippets and holds each to the allow-list of its
// context for the scope. The error names the snippet, the line and why.
func Check(scope Scope, snippets []v1alpha1.Snippet) (*Checked, error) {
	c := &Checked{directives: map[v1alpha1.NginxContext][]syntax.Directive{}}
	declared := map[string]bool{}
	type use struct {
		zone, where string
	}
	var uses []use
	for i, s := range snippets {
		where := fmt.Sprintf("spec.snippets[%d] (%s)", i, s.Context)
		p, ok := contextPlace[s.Context]
		if !ok {
			return nil, fmt.Errorf("%s: the context must be main, http, http.server or http.server.location", where)
		}
		ds, err := syntax.Read(s.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		w := &walk{scope: scope, zoneName: userZoneName}
		if err := w.block(ds, p); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		for _, z := range w.zones {
			if declared[z.Name] {
				return nil, fmt.Errorf("%s: zone %s is declared twice", where, z.Name)
			}
			declared[z.Name] = true
			c.Zones = append(c.Zones, z)
		}
		for _, u := range w.uses {
			uses = append(uses, use{u, where})
		}
		if len(ds) > 0 {
			c.directives[s.Context] = ds
		}
	}
	if len(c.Zones) > MaxZones {
		return nil, fmt.Errorf("spec.snippets: %d zones are declared, more than the %d one object may declare", len(c.Zones), MaxZones)
	}
	for _, u := range uses {
		if !declared[u.zone] {
			return nil, fmt.Errorf("%s: zone %s is not declared by the object's http snippet (limit_conn_zone): a zone belongs to the object that declares it, and NGINX refuses a zone no one declares",
				u.where, conditions.Quote(u.zone))
		}
	}
	return c, nil
}

// contextPlace is the place of each context's top level.
var contextPlace = map[v1alpha1.NginxContext]place{
	v1alpha1.NginxContextMain:               inMain,
	v1alpha1.NginxContextHTTP:               inHTTP,
	v1alpha1.NginxContextHTTPServer:         inServer,
	v1alpha1.NginxContextHTTPServerLocation: inLocation,
}

// walk checks one snippet's directives.
type walk struct {
	scope Scope
	// zoneName checks the name of a zone declared or used.
	zoneName func(string) error
	n        int
	zones    []Zone
	uses     []string
}

// block checks the directives of one block (or the snippet's top level) at p.
func (w *walk) block(ds []syntax.Directive, p place) error {
	singles := map[string]bool{}
	for _, d := range ds {
		w.n++
		if w.n > maxDirectives {
			return fmt.Errorf("line %d: more than %d directives", d.Line, maxDirectives)
		}
		if err := w.directive(d, p, singles); err != nil {
			return fmt.Errorf("line %d: %w", d.Line, err)
		}
	}
	return nil
}

func (w *walk) directive(d syntax.Directive, p place, singles map[string]bool) error {
	name := conditions.Quote(d.Name)
	r, ok := allowed[d.Name]
	switch {
	case p == inMain:
		return fmt.Errorf("directive %s cannot stand in a main snippet, which takes no directive: Gatewall sets what a data plane's main context needs, and the rest loads code, reads files or changes how NGINX runs%s",
			name, because(d.Name))
	case !ok:
		if why := whyRefused(d.Name); why != "" {
			return fmt.Errorf("directive %s is not allowed in snippets: %s", name, why)
		}
		return fmt.Errorf("directive %s is not on the allow-list of snippets (docs/snippets.md lists it)", name)
	case w.scope == RuleScope && p != inLocation && p != inLimitExcept && !r.declares:
		return fmt.Errorf("directive %s would change every route %s, other teams' too: a SnippetsFilter's %s snippet may only declare; put it in the http.server.location snippet, for the rules that name the filter",
			name, reach(p), p)
	case !slices.Contains(r.places, p):
		return fmt.Errorf("directive %s cannot stand in %s%s", name, describe(p), where(r))
	}
	if err := r.args(d.Args); err != nil {
		return fmt.Errorf("directive %s %w", name, err)
	}
	switch {
	case r.block == "" && d.Block != nil:
		return fmt.Errorf("directive %s takes no block", name)
	case r.block != "" && d.Block == nil:
		return fmt.Errorf("directive %s needs a block", name)
	}
	if r.single {
		k := singleKey(d.Name, r, d.Args)
		if singles[k] {
			return fmt.Errorf("directive %s is repeated in the same block, which NGINX refuses", conditions.Quote(k))
		}
		singles[k] = true
	}
	switch d.Name {
	case "limit_conn_zone":
		zone, bytes, _ := zoneDeclaration(d.Args[1])
		if err := w.zoneName(zone); err != nil {
			return fmt.Errorf("directive %s: %w", name, err)
		}
		w.zones = append(w.zones, Zone{Name: zone, Bytes: bytes})
	case "limit_conn":
		if err := w.zoneName(d.Args[0]); err != nil {
			return fmt.Errorf("directive %s: %w", name, err)
		}
		w.uses = append(w.uses, d.Args[0])
	}
	if d.Block != nil {
		return w.block(d.Block, r.block)
	}
	return nil
}

// because adds why a directive is refused anyway, when it is known.
func because(name string) string {
	if why := whyRefused(name); why != "" {
		return " (" + why + ")"
	}
	return ""
}

// describe names a place in messages.
func describe(p place) string {
	switch p {
	case inHTTP:
		return "the http context: settings there would reach Gatewall's own servers (readiness, endpoints); put it in http.server, for every server of the Gateway"
	case inLimitExcept:
		return "a limit_except block, which takes allow and deny"
	}
	return "the " + string(p) + " context"
}

// where says where a directive may stand.
func where(r rule) string {
	ps := make([]string, 0, len(r.places))
	for _, p := range r.places {
		ps = append(ps, string(p))
	}
	return " (it may stand in " + strings.Join(ps, ", ") + ")"
}

// reach says what a setting at p would change.
func reach(p place) string {
	switch p {
	case inServer:
		return "served on the hostname"
	case inHTTP:
		return "of the Gateway"
	}
	return "of the data plane"
}
