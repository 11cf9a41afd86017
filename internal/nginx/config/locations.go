package config

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/syntax"
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
		loc.Directives = []Directive{D("return", "404")}
		return
	}
	ctx := actionContext{port: srv.Port, ssl: srv.SSL}
	if !cands[0].conditional() {
		loc.Directives = b.action(cands[0], ctx, extra)
		loc.Includes = b.includesOf(cands[0])
		return
	}
	// The location's dispatch variable names it; its internal locations
	// take their paths from the same (unique) name.
	where := []string{strconv.Itoa(int(srv.Port)), srv.Name, k.modifier, k.path}
	dispatch := b.names.of(kindDispatchVar, where...)
	lid := strings.TrimPrefix(dispatch, kindDispatchVar.prefix)
	var conds [][]string
	for _, c := range cands {
		conds = append(conds, b.conditions(c.match))
		if !c.conditional() {
			break
		}
	}
	ictx := ctx
	ictx.internal = true
	paths := make([]string, len(conds))
	for i, c := range cands[:len(conds)] {
		paths[i] = InternalPrefix + lid + "/" + strconv.Itoa(i)
		extra[paths[i]] = &Location{Modifier: "=", Path: paths[i], Internal: true, Directives: b.action(c, ictx, extra), Includes: b.includesOf(c)}
	}
	conditional := len(conds)
	next := ""
	if !cands[len(conds)-1].conditional() {
		conditional--
		next = Quote(paths[conditional])
	} else {
		notFound := InternalPrefix + "404"
		next = Quote(notFound)
		extra[notFound] = &Location{Modifier: "=", Path: notFound, Internal: true, Directives: []Directive{D("return", "404")}}
	}
	// Each group's map falls back to the next group's, the last one's to
	// the default, so candidates are still tried in precedence order.
	groups := dispatchGroups(conds[:conditional])
	for g := len(groups) - 1; g >= 0; g-- {
		variable := dispatch
		if g > 0 {
			variable = b.names.of(kindDispatchVar, append(where, strconv.Itoa(g))...)
		}
		next = b.putMap(dispatchMap(variable, conds, paths, groups[g], next))
	}
	loc.Directives = []Directive{
		// NGINX refuses a body over client_max_body_size (413) as soon as
		// it finds a location, before its rewrites run: here, the
		// routes' own limits (ClientSettingsPolicy) would never be
		// reached. This location reads no body; the internal location
		// it passes the request to checks the size against the route's
		// limit, declared length and chunked bodies alike.
		D("client_max_body_size", "0"),
		D("set", "$gw_orig_uri", "$uri"),
		D("rewrite", "^", next, "last"),
	}
}

// dispatchGroups splits conditional candidates (given by their condition
// variables) into consecutive groups whose variables, concatenated as a
// map's source, fit in one NGINX token: the candidates of one location
// come from every route with that path on the server, so there is no
// bound on their number. It returns each group's [first, end) range.
func dispatchGroups(conds [][]string) [][2]int {
	var groups [][2]int
	start, size := 0, 0
	seen := map[string]bool{}
	for i, vars := range conds {
		if i > start && size+newLength(vars, seen) > syntax.MaxToken {
			groups = append(groups, [2]int{start, i})
			start, size, seen = i, 0, map[string]bool{}
		}
		size += newLength(vars, seen)
		for _, v := range vars {
			seen[v] = true
		}
	}
	return append(groups, [2]int{start, len(conds)})
}

// newLength is the length of the variables not yet seen.
func newLength(vars []string, seen map[string]bool) int {
	n := 0
	counted := map[string]bool{}
	for _, v := range vars {
		if !seen[v] && !counted[v] {
			counted[v] = true
			n += len(v)
		}
	}
	return n
}

// dispatchMap is the map of one group of candidates: its source is the
// concatenated "1"/"0" values of the group's condition variables, and a
// regex per candidate, in precedence order, requires that candidate's
// digits to be "1"; otherwise it gives fallback.
func dispatchMap(variable string, conds [][]string, paths []string, group [2]int, fallback string) *Map {
	var vars []string
	index := map[string]int{}
	for _, cs := range conds[group[0]:group[1]] {
		for _, v := range cs {
			if _, ok := index[v]; !ok {
				index[v] = len(vars)
				vars = append(vars, v)
			}
		}
	}
	m := &Map{Source: Quote(strings.Join(vars, "")), Variable: variable, Default: fallback}
	for i := group[0]; i < group[1]; i++ {
		digits := []byte(strings.Repeat(".", len(vars)))
		for _, v := range conds[i] {
			digits[index[v]] = '1'
		}
		m.Entries = append(m.Entries, MapEntry{Key: Quote("~^" + string(digits) + "$"), Value: Quote(paths[i])})
	}
	return m
}
