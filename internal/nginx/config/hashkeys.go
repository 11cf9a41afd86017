package config

import (
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// The keys of every hash table NGINX builds from Gatewall's configuration
// are recorded by the writer as it writes the files of one context (http,
// or stream), and the tables are sized from them (hashsize.go). Sizing
// what was written, rather than what a second walk over the configuration
// model finds, counts every declaration whatever wrote it: the variables
// of the TCP and UDP listeners' splits and of the hash balancers' key maps
// were left out of such a walk, and a tenant's weighted TCPRoutes could
// fail the whole Gateway's configuration.
//
// What NGINX hashes, by directive:
//   - variables: map, split_clients, geo, set, js_var, auth_request_set,
//     and the named captures of every regular expression (in any word: a
//     word that only looks like one makes a table larger, never too small);
//   - map keys: every map's keys but its regular expressions (writeMap);
//   - server names: the names of the http servers listening on each
//     address;
//   - proxied header names: NGINX's and the block's own, for each block
//     that sets or hides headers (a block setting none inherits its
//     parent's table).
//
// Policies' include files are written apart (includeFile) and are not
// recorded: the directives policies render declare no variable and set
// no proxied header (test/confcheck knows every directive they write).
//
// The writer also records whether a word reads ${gw_dollar}, the variable
// holding a literal '$' in header values (syntax.HeaderValue): http.conf
// declares it only then.

// hashKeys are what one context's files put in NGINX's hash tables.
type hashKeys struct {
	// variables are the names the files declare, without "$".
	variables map[string]bool
	// maps are the keys of each map.
	maps []syntax.HashTable
	// serverNames are the names of the servers listening on each address.
	serverNames map[string][]string
	// proxySet and proxyHide are the header tables of the blocks that
	// set or hide proxied headers, by their sorted names (equal tables are
	// one search).
	proxySet, proxyHide map[string][]string
	// open are the blocks being written, the context itself first.
	open []*hashBlock
	// dollar says a word read ${gw_dollar}.
	dollar bool
}

// hashBlock is what a block being written holds of the keys.
type hashBlock struct {
	// directive opened it: "server", "location", "map", ...
	directive string
	// listens and names are a server's addresses and server names.
	listens, names []string
	// set and hide are the headers the block sets and hides for proxy_pass.
	set, hide []string
}

// newHashKeys records the keys of one context's files.
func newHashKeys() *hashKeys {
	return &hashKeys{variables: map[string]bool{}, serverNames: map[string][]string{},
		proxySet: map[string][]string{}, proxyHide: map[string][]string{}, open: []*hashBlock{{}}}
}

// line records a directive written in the innermost block.
func (k *hashKeys) line(words []string) {
	if k == nil || len(words) == 0 {
		return
	}
	k.captures(words)
	k.readsDollar(words)
	b := k.open[len(k.open)-1]
	if b.directive == "map" || b.directive == "split_clients" || b.directive == "geo" {
		return // entries, not directives (writeMap records a map's keys)
	}
	switch words[0] {
	case "set", "js_var", "auth_request_set":
		if len(words) > 1 {
			k.declare(words[1])
		}
	case "listen":
		if len(words) > 1 {
			b.listens = append(b.listens, words[1])
		}
	case "server_name":
		for _, n := range words[1:] {
			if n == `""` {
				n = ""
			}
			b.names = append(b.names, n)
		}
	case "proxy_set_header":
		if len(words) > 1 {
			b.set = append(b.set, words[1])
		}
	case "proxy_hide_header":
		if len(words) > 1 {
			b.hide = append(b.hide, words[1])
		}
	}
}

// openBlock records a block's opening words.
func (k *hashKeys) openBlock(words []string) {
	if k == nil {
		return
	}
	k.captures(words)
	b := &hashBlock{}
	if len(words) > 0 {
		b.directive = words[0]
	}
	switch {
	case (b.directive == "map" || b.directive == "split_clients") && len(words) > 2:
		k.declare(words[2])
	case b.directive == "geo" && len(words) > 1:
		k.declare(words[len(words)-1])
	}
	k.open = append(k.open, b)
}

// closeBlock records what the innermost block held.
func (k *hashKeys) closeBlock() {
	if k == nil || len(k.open) < 2 {
		return
	}
	b := k.open[len(k.open)-1]
	k.open = k.open[:len(k.open)-1]
	k.endBlock(b)
}

// endBlock adds the tables of a block that ended.
func (k *hashKeys) endBlock(b *hashBlock) {
	if b.directive == "server" {
		for _, addr := range b.listens {
			k.serverNames[addr] = append(k.serverNames[addr], b.names...)
		}
	}
	if len(b.set) > 0 {
		list := syntax.HeaderTable(syntax.ProxySetDefaults, b.set)
		k.proxySet[strings.Join(list, "\n")] = list
	}
	if len(b.hide) > 0 {
		list := syntax.HeaderTable(syntax.ProxyHideDefaults, b.hide)
		k.proxyHide[strings.Join(list, "\n")] = list
	}
}

// addMap records the keys NGINX hashes of a map: all but regular expressions.
func (k *hashKeys) addMap(m *Map) {
	if k == nil {
		return
	}
	var keys []string
	for _, e := range m.Entries {
		key := e.Key
		if u, err := strconv.Unquote(key); err == nil && strings.HasPrefix(key, `"`) {
			key = u
		}
		if !strings.HasPrefix(key, "~") {
			keys = append(keys, key)
		}
	}
	if m.Hostnames {
		k.maps = append(k.maps, hostnameTables(keys)...)
	} else {
		k.maps = append(k.maps, syntax.HashKeys(keys))
	}
}

func (k *hashKeys) declare(v string) { k.variables[strings.TrimPrefix(v, "$")] = true }

// dollarRead is how a word reads the literal '$' variable.
var dollarRead = "${" + syntax.DollarVariable + "}"

// readsDollar records whether words read the literal '$' variable.
func (k *hashKeys) readsDollar(words []string) {
	for _, w := range words {
		if strings.Contains(w, dollarRead) {
			k.dollar = true
			return
		}
	}
}

// captureRE finds named captures, which NGINX declares as variables.
var captureRE = regexp.MustCompile(`\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>`)

// captures declares the named captures of words.
func (k *hashKeys) captures(words []string) {
	for _, w := range words {
		if !strings.Contains(w, "(?") {
			continue // the common case, without running the expression
		}
		for _, m := range captureRE.FindAllStringSubmatch(w, -1) {
			k.declare(m[1])
		}
	}
}

// finish ends the context's own block (its http- or stream-level
// directives) and returns the keys.
func (k *hashKeys) finish() *hashKeys {
	for len(k.open) > 1 {
		k.closeBlock()
	}
	k.endBlock(k.open[0])
	k.open = nil
	return k
}

// variableNames are the declared variables, sorted.
func (k *hashKeys) variableNames() []string {
	out := make([]string, 0, len(k.variables))
	for v := range k.variables {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// hashFamilies are the tables of the http context, by the directives that
// size them.
func (k *hashKeys) hashFamilies() []hashFamily {
	return []hashFamily{
		{name: "server_names_hash", defaultBucket: syntax.CacheLine, defaultMax: 512, tables: k.serverNameTables()},
		{name: "map_hash", defaultBucket: syntax.CacheLine, defaultMax: 2048, tables: k.maps},
		{name: "variables_hash", defaultBucket: 64, defaultMax: 1024, tables: []syntax.HashTable{append(syntax.HashKeys(k.variableNames()), nginxVariables...)}, shared: true},
		{name: "proxy_headers_hash", defaultBucket: 64, defaultMax: 512, tables: append(headerTables(k.proxySet), headerTables(k.proxyHide)...)},
	}
}

// streamHashFamilies are the tables of the stream context: its maps (the
// TLS ports' server names) and its variables (the maps', one split per
// set of weighted backends of TLS, TCP and UDP routes, the sniffer's).
// NGINX 1.22's stream servers have no names.
func (k *hashKeys) streamHashFamilies() []hashFamily {
	return []hashFamily{
		{name: "map_hash", defaultBucket: syntax.CacheLine, defaultMax: 2048, tables: k.maps},
		{name: "variables_hash", defaultBucket: 64, defaultMax: 1024, tables: []syntax.HashTable{append(syntax.HashKeys(k.variableNames()), nginxStreamVariables...)}, shared: true},
	}
}

// serverNameTables are the server names of each address (NGINX builds
// them for each address servers listen on): exact names, and the tables
// of the wildcard names' labels. Addresses with the same servers (a port
// on IPv4 and IPv6) have the same tables, searched once.
func (k *hashKeys) serverNameTables() []syntax.HashTable {
	lists := map[string][]string{}
	for _, names := range k.serverNames {
		lists[strings.Join(names, "\n")] = names
	}
	keys := make([]string, 0, len(lists))
	for key := range lists {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var out []syntax.HashTable
	for _, key := range keys {
		out = append(out, hostnameTables(lists[key])...)
	}
	return out
}

// headerTables are the tables of header lists, in a fixed order.
func headerTables(lists map[string][]string) []syntax.HashTable {
	keys := make([]string, 0, len(lists))
	for k := range lists {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]syntax.HashTable, 0, len(keys))
	for _, k := range keys {
		out = append(out, syntax.HashKeys(lists[k]))
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
	suffixes := make([]string, 0, len(children))
	for s := range children {
		suffixes = append(suffixes, s)
	}
	sort.Strings(suffixes)
	for _, s := range suffixes {
		labels := make([]string, 0, len(children[s]))
		for l := range children[s] {
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
// Debian's NGINX 1.22: core, upstream, ssl, ssl_preread, realip, limit_conn),
// as nginxVariables do for http.
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
