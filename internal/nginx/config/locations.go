package config

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
)

// entry is one match of one rule of one route: a candidate for a location.
type entry struct {
	route    *graph.Route
	rule     *graph.Rule
	match    graph.Match
	matchIdx int
}

// conditional says whether the entry needs more than its path to match.
func (e entry) conditional() bool {
	return e.match.Method != "" || len(e.match.Headers) > 0 || len(e.match.Query) > 0
}

func pathRank(t string) int {
	switch t {
	case graph.PathExact:
		return 0
	case graph.PathPrefix:
		return 1
	}
	return 2
}

// precedes orders entries by the Gateway API's precedence: exact paths, then
// longer prefixes, then a method match, more header matches, more query
// matches, then the older route (creation time, then namespace/name), then
// rule and match order.
func precedes(a, b entry) bool {
	if ra, rb := pathRank(a.match.Path.Type), pathRank(b.match.Path.Type); ra != rb {
		return ra < rb
	}
	if la, lb := len(a.match.Path.Value), len(b.match.Path.Value); la != lb {
		return la > lb
	}
	if (a.match.Method != "") != (b.match.Method != "") {
		return a.match.Method != ""
	}
	if ha, hb := len(a.match.Headers), len(b.match.Headers); ha != hb {
		return ha > hb
	}
	if qa, qb := len(a.match.Query), len(b.match.Query); qa != qb {
		return qa > qb
	}
	ta, tb := a.route.Source.GetCreationTimestamp(), b.route.Source.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	if a.route.Key != b.route.Key {
		return a.route.Key.String() < b.route.Key.String()
	}
	if a.rule.Index != b.rule.Index {
		return a.rule.Index < b.rule.Index
	}
	return a.matchIdx < b.matchIdx
}

// locKey identifies a location block.
type locKey struct {
	modifier string
	path     string
}

// locations builds a server's locations. Every exact and prefix location
// lists all entries that cover its path, in precedence order, so a request
// falls back to a shorter prefix when a longer one's conditions do not match,
// as the Gateway API requires (NGINX itself would not fall back).
func (b *builder) locations(srv *Server, routes []*graph.Route) {
	var entries []entry
	for _, r := range routes {
		for _, rule := range r.ValidRules() {
			for i, m := range rule.Matches {
				entries = append(entries, entry{route: r, rule: rule, match: m, matchIdx: i})
			}
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return precedes(entries[i], entries[j]) })

	keys := map[locKey]bool{}
	for _, e := range entries {
		p := e.match.Path
		switch p.Type {
		case graph.PathExact:
			keys[locKey{"=", p.Value}] = true
		case graph.PathPrefix:
			if p.Value == "/" {
				keys[locKey{"", "/"}] = true
			} else {
				keys[locKey{"=", p.Value}] = true
				keys[locKey{"", p.Value + "/"}] = true
			}
		case graph.PathRegex:
			keys[locKey{"~", p.Value}] = true
		}
	}
	if !keys[locKey{"", "/"}] {
		srv.Locations = append(srv.Locations, notFoundLocation())
	}
	// Regex locations are tried in configuration order, so they come last,
	// ordered by the precedence of their best entry; the others by path.
	regexOrder := map[string]int{}
	for i, e := range entries {
		if _, ok := regexOrder[e.match.Path.Value]; !ok && e.match.Path.Type == graph.PathRegex {
			regexOrder[e.match.Path.Value] = i
		}
	}
	var ordered, regexes []locKey
	for k := range keys {
		if k.modifier == "~" {
			regexes = append(regexes, k)
		} else {
			ordered = append(ordered, k)
		}
	}
	sort.Slice(ordered, func(i, j int) bool {
		if ordered[i].modifier != ordered[j].modifier {
			return ordered[i].modifier < ordered[j].modifier
		}
		return ordered[i].path < ordered[j].path
	})
	sort.Slice(regexes, func(i, j int) bool { return regexOrder[regexes[i].path] < regexOrder[regexes[j].path] })
	ordered = append(ordered, regexes...)
	extra := map[string]*Location{}
	for _, k := range ordered {
		var cands []entry
		for _, e := range entries {
			if covers(e.match.Path, k) {
				cands = append(cands, e)
			}
		}
		b.location(srv, k, cands, extra)
	}
	names := make([]string, 0, len(extra))
	for p := range extra {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		srv.Locations = append(srv.Locations, extra[p])
	}
}

// covers says whether a path match applies to every request the location gets.
func covers(p graph.PathMatch, k locKey) bool {
	switch k.modifier {
	case "~":
		return p.Type == graph.PathRegex && p.Value == k.path
	case "=":
		switch p.Type {
		case graph.PathExact:
			return p.Value == k.path
		case graph.PathPrefix:
			return hasPathPrefix(k.path, p.Value)
		}
	default: // prefix location k.path, ending in "/"
		if p.Type != graph.PathPrefix {
			return false
		}
		return p.Value == "/" || k.path == p.Value+"/" || strings.HasPrefix(k.path, p.Value+"/")
	}
	return false
}

// hasPathPrefix says whether path starts with prefix element by element.
func hasPathPrefix(path, prefix string) bool {
	return prefix == "/" || path == prefix || strings.HasPrefix(path, prefix+"/")
}

// location builds the location for k. When the best candidate needs no
// condition it is served directly. Otherwise one regex map over the
// candidates' condition digits picks, in precedence order, the internal
// location serving the first candidate whose conditions all hold.
func (b *builder) location(srv *Server, k locKey, cands []entry, extra map[string]*Location) {
	loc := &Location{Modifier: k.modifier, Path: k.path}
	srv.Locations = append(srv.Locations, loc)
	if len(cands) == 0 {
		loc.Directives = []Directive{d("return", "404")}
		return
	}
	ctx := actionContext{port: srv.Port, ssl: srv.SSL}
	if !cands[0].conditional() {
		loc.Directives = b.action(cands[0], ctx, extra)
		loc.Includes = b.includesOf(cands[0].route)
		return
	}
	lid := id(strconv.Itoa(int(srv.Port)), srv.Name, k.modifier, k.path)
	if _, taken := extra[InternalPrefix+lid+"/0"]; taken {
		// Another location of the server has the same short id (see addMap).
		lid = longID(strconv.Itoa(int(srv.Port)), srv.Name, k.modifier, k.path)
	}
	var vars []string
	index := map[string]int{}
	condsOf := make([][]string, len(cands))
	for i, c := range cands {
		condsOf[i] = b.conditions(c.match)
		for _, v := range condsOf[i] {
			if _, ok := index[v]; !ok {
				index[v] = len(vars)
				vars = append(vars, v)
			}
		}
		if !c.conditional() {
			break
		}
	}
	m := &Map{Source: Quote(strings.Join(vars, "")), Variable: "$gw_l_" + lid}
	ictx := ctx
	ictx.internal = true
	for i, c := range cands {
		path := InternalPrefix + lid + "/" + strconv.Itoa(i)
		extra[path] = &Location{Modifier: "=", Path: path, Internal: true, Directives: b.action(c, ictx, extra), Includes: b.includesOf(c.route)}
		if !c.conditional() {
			m.Default = Quote(path)
			break
		}
		digits := []byte(strings.Repeat(".", len(vars)))
		for _, v := range condsOf[i] {
			digits[index[v]] = '1'
		}
		m.Entries = append(m.Entries, MapEntry{Key: Quote("~^" + string(digits) + "$"), Value: Quote(path)})
	}
	if m.Default == "" {
		notFound := InternalPrefix + "404"
		m.Default = Quote(notFound)
		extra[notFound] = &Location{Modifier: "=", Path: notFound, Internal: true, Directives: []Directive{d("return", "404")}}
	}
	loc.Directives = []Directive{
		d("set", "$gw_orig_uri", "$uri"),
		d("rewrite", "^", b.addMap(m), "last"),
	}
}
