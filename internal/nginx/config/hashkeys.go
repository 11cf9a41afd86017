package config

import (
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// The keys of every hash table NGINX builds from Gatewall's configuration,
// collected from the configuration model the files are written from.

// hashFamilies are the tables NGINX builds, by the directives that size them.
func (c *Config) hashFamilies() []hashFamily {
	proxySet, proxyHide := c.proxyHeaderTables()
	return []hashFamily{
		{name: "server_names_hash", defaultBucket: syntax.CacheLine, defaultMax: 512, tables: c.serverNameTables()},
		{name: "map_hash", defaultBucket: syntax.CacheLine, defaultMax: 2048, tables: mapTables(c.allMaps())},
		{name: "variables_hash", defaultBucket: 64, defaultMax: 1024, tables: []syntax.HashTable{append(syntax.HashKeys(c.variables()), nginxVariables...)}, shared: true},
		{name: "proxy_headers_hash", defaultBucket: 64, defaultMax: 512, tables: append(proxySet, proxyHide...)},
	}
}

// serverNameTables are the server names of each port (NGINX builds them
// for each address the port's servers listen on): exact names, and the
// tables of the wildcard names' labels.
func (c *Config) serverNameTables() []syntax.HashTable {
	byPort := map[int32][]string{}
	for _, s := range c.Servers {
		byPort[s.Port] = append(byPort[s.Port], s.Name)
	}
	var out []syntax.HashTable
	for _, names := range byPort {
		out = append(out, hostnameTables(names)...)
	}
	return out
}

// streamHashFamilies are the tables NGINX builds in the stream context:
// the TLS passthrough ports' maps of server names, and the variables (one
// split per set of weighted backends: hundreds of TLSRoutes make hundreds).
func (c *Config) streamHashFamilies() []hashFamily {
	var maps []*Map
	for _, p := range c.TLSPorts {
		maps = append(maps, p.Map)
	}
	return []hashFamily{
		{name: "map_hash", defaultBucket: syntax.CacheLine, defaultMax: 2048, tables: mapTables(maps)},
		{name: "variables_hash", defaultBucket: 64, defaultMax: 1024, tables: []syntax.HashTable{append(syntax.HashKeys(c.streamVariables()), nginxStreamVariables...)}, shared: true},
	}
}

// streamVariables are the names of the variables the stream context
// declares: the TLS ports' maps, the splits, the sniffer's.
func (c *Config) streamVariables() []string {
	var out []string
	for _, p := range c.TLSPorts {
		out = append(out, strings.TrimPrefix(p.Map.Variable, "$"))
	}
	for _, s := range c.StreamSplits {
		out = append(out, strings.TrimPrefix(s.Variable, "$"))
	}
	if len(c.Sniffed) > 0 {
		out = append(out, "gw_proto")
	}
	sort.Strings(out)
	return out
}

// mapTables are the keys of each map NGINX hashes: all but regular expressions.
func mapTables(maps []*Map) []syntax.HashTable {
	var out []syntax.HashTable
	for _, m := range maps {
		var keys []string
		for _, e := range m.Entries {
			k := e.Key
			if u, err := strconv.Unquote(k); err == nil && strings.HasPrefix(k, `"`) {
				k = u
			}
			if !strings.HasPrefix(k, "~") {
				keys = append(keys, k)
			}
		}
		if m.Hostnames {
			out = append(out, hostnameTables(keys)...)
		} else {
			out = append(out, syntax.HashKeys(keys))
		}
	}
	return out
}

// hostnameTables are the tables of names where "*."-prefixed ones are
// wildcards: the exact names, then, as NGINX stores wildcards (the labels
// reversed, one table per label of each level: ngx_hash_wildcard_init),
// the labels following each common suffix.
func hostnameTables(names []string) []syntax.HashTable {
	var exact []string
	children := map[string]map[string]bool{} // suffix ("com.example") -> next labels
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, "*.")
		if !ok {
			exact = append(exact, n)
			continue
		}
		labels := strings.Split(rest, ".")
		suffix := ""
		for i := len(labels) - 1; i >= 0; i-- {
			if children[suffix] == nil {
				children[suffix] = map[string]bool{}
			}
			children[suffix][labels[i]] = true
			suffix += "." + labels[i]
		}
	}
	out := []syntax.HashTable{syntax.HashKeys(exact)}
	for _, next := range children {
		labels := make([]string, 0, len(next))
		for l := range next {
			labels = append(labels, l)
		}
		out = append(out, syntax.HashKeys(labels))
	}
	return out
}

// nginxVariables stand in for the variables NGINX declares itself: as many
// as Debian's NGINX 1.22 with its modules has, give or take, with names of
// the same lengths and hash values spread as theirs are.
var nginxVariables = standIns(192, 18)

// nginxStreamVariables stand in for the variables the stream module and
// the modules Gatewall loads declare in the stream context (about 55 in
// Debian's NGINX 1.22: core, upstream, ssl, ssl_preread, realip), as
// nginxVariables do for http.
var nginxStreamVariables = standIns(64, 20)

// standIns are n keys of 6 to 6+spread bytes with random hash values, the
// same on every run.
func standIns(n, spread int) syntax.HashTable {
	r := rand.New(rand.NewPCG(1, 22))
	t := make(syntax.HashTable, n)
	for i := range t {
		t[i] = syntax.HashKey{Len: 6 + r.IntN(spread), Hash: r.Uint64()}
	}
	return t
}

// captureRE finds named captures, which NGINX declares as variables.
var captureRE = regexp.MustCompile(`\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>`)

// variables are the names of the variables the configuration declares:
// maps, splits, set, and named captures of regular expressions.
func (c *Config) variables() []string {
	seen := map[string]bool{}
	add := func(v string) { seen[strings.TrimPrefix(v, "$")] = true }
	captures := func(s string) {
		for _, m := range captureRE.FindAllStringSubmatch(s, -1) {
			add(m[1])
		}
	}
	for _, m := range c.allMaps() {
		add(m.Variable)
		for _, e := range m.Entries {
			captures(e.Key)
		}
	}
	for _, s := range c.Splits {
		add(s.Variable)
	}
	c.walkDirectives(func(_ *Location, dir Directive) {
		if dir.Name == "set" && len(dir.Args) > 0 {
			add(dir.Args[0])
		}
		for _, a := range dir.Args {
			captures(a)
		}
	})
	for _, s := range c.Servers {
		for _, l := range s.Locations {
			captures(l.Path)
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// walkDirectives calls fn with every directive of every server and
// location, blocks' inner ones included; loc is nil at server level.
func (c *Config) walkDirectives(fn func(loc *Location, dir Directive)) {
	var walk func(loc *Location, ds []Directive)
	walk = func(loc *Location, ds []Directive) {
		for _, dir := range ds {
			fn(loc, dir)
			walk(loc, dir.Block)
		}
	}
	for _, s := range c.Servers {
		walk(nil, s.Directives)
		for _, l := range s.Locations {
			walk(l, l.Directives)
		}
	}
}

// proxyHeaderTables are the tables of header names NGINX builds for the
// http level and each location that sets or hides headers for proxy_pass
// (the gRPC ones have a fixed size: the graph refuses what they cannot
// hold, see syntax.CheckGRPCHeaders).
func (c *Config) proxyHeaderTables() (set, hide []syntax.HashTable) {
	type names map[string][]string
	contexts := []names{{"proxy_set_header": {"Host"}}}
	for _, dir := range defaultProxyHeaders() {
		contexts[0]["proxy_set_header"] = append(contexts[0]["proxy_set_header"], dir.Args[0])
	}
	byLoc := map[*Location]names{}
	var order []*Location
	c.walkDirectives(func(loc *Location, dir Directive) {
		if dir.Name != "proxy_set_header" && dir.Name != "proxy_hide_header" {
			return
		}
		if byLoc[loc] == nil {
			byLoc[loc] = names{}
			order = append(order, loc)
		}
		byLoc[loc][dir.Name] = append(byLoc[loc][dir.Name], dir.Args[0])
	})
	for _, l := range order {
		contexts = append(contexts, byLoc[l])
	}
	seen := map[string]bool{}
	table := func(kind string, defaults, own []string) []syntax.HashTable {
		list := syntax.HeaderTable(defaults, own)
		if k := kind + "\n" + strings.Join(list, "\n"); seen[k] {
			return nil
		} else {
			seen[k] = true
		}
		return []syntax.HashTable{syntax.HashKeys(list)}
	}
	for _, ctx := range contexts {
		set = append(set, table("set", syntax.ProxySetDefaults, ctx["proxy_set_header"])...)
		hide = append(hide, table("hide", syntax.ProxyHideDefaults, ctx["proxy_hide_header"])...)
	}
	return set, hide
}
