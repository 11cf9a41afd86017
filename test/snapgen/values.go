package snapgen

import "strings"

// The pools of values that reach nginx.conf. Each starts with simple valid
// values, then edge cases the API allows (long names, wildcards, every
// character an allow-list admits), then a few values Gatewall must refuse.

// label63 is the longest DNS label.
var label63 = repeat("l", 63)

// name253 is the longest hostname: labels of 63, 63, 63 and 61 characters.
var name253 = label63 + "." + label63 + "." + label63 + "." + repeat("m", 61)

// hostname is a listener or route hostname.
func (g *gen) hostname() string {
	if g.bad() {
		return oneOf(g, "Upper.example.com", "*", "a_b.example.com", "-a.example.com", "a..example.com",
			"*.*.example.com", "a.example.com.", name253+"x", "a b.example.com", `a"b.example.com`, "a;b.example.com")
	}
	switch g.intn(15) {
	case 0:
		return "a.example.com"
	case 1:
		return "*.example.com"
	case 2:
		return "b.example.com"
	case 3:
		return "example.com"
	case 4:
		return "*.a.example.com"
	case 5:
		return "x.a.example.com"
	case 6:
		return label63 + ".example.com"
	case 7:
		return "*." + label63 + ".example.com"
	case 8:
		return name253
	case 9:
		return "*." + name253[4:]
	case 10:
		// Map keywords and single labels are valid hostnames.
		return oneOf(g, "default", "include", "hostnames", "volatile", "localhost")
	case 11:
		return oneOf(g, "www", "api", "x-1", "0") + "." + oneOf(g, "example.com", "example.org", "a.example.com")
	case 12:
		return "*.example.org"
	case 13:
		return "1.2.3.4"
	}
	return "b.example.org"
}

// routeHostname is a route hostname: usually one under example.com, so
// that it meets the listeners' hostnames, sometimes any hostname.
func (g *gen) routeHostname() string {
	if g.one(4) {
		return g.hostname()
	}
	return oneOf(g, "a.example.com", "*.example.com", "x.a.example.com", "b.example.com", "*.a.example.com", label63+".example.com")
}

// exactHostname is a redirect, rewrite or BackendTLSPolicy hostname.
func (g *gen) exactHostname() string {
	if g.bad() {
		return oneOf(g, "*.example.com", "Bad.example.com", "a;b")
	}
	return oneOf(g, "backend.example.com", "example.com", label63+".example.com", name253, "x-1.example.org")
}

// path is an Exact or PathPrefix match, or a rewritten path.
func (g *gen) path() string {
	if g.bad() {
		return oneOf(g, "/"+repeat("p", 1024), "//a", "/./a", "/a/..", "/a;b", "/a b", `/a"b`, "relative", "/a$b",
			"/_gatewall|/0", "/a{b}", "/a\\b", "", "/%2F")
	}
	switch g.intn(11) {
	case 0:
		return "/"
	case 1:
		return "/a"
	case 2:
		return "/a/b"
	case 3:
		return "/api"
	case 4:
		return "/api/"
	case 5:
		return "/v1/items"
	case 6:
		return "/" + oneOf(g, "a-b_c.d~e", "p!&()*+,=:@", "x/y/z/", "_gatewall/404", "A/B")
	case 7:
		if g.edge() {
			return "/" + repeat("p", 1023)
		}
		return "/p"
	case 8:
		return "/a/" + oneOf(g, "b", "c", "a")
	case 9:
		return oneOf(g, "/b", "/a/b/c", "/api/v1")
	}
	return "/b/"
}

// regexAtoms build regular expression values, with quantifiers and what
// NGINX's configuration syntax gives meaning to (carried in quotes);
// pathAtoms are the same for paths.
var (
	regexAtoms = []string{"a", "api", "/", `\.`, ".*", "[0-9]+", "[a-z]", "(v1|v2)", `\d`, "[^/]*", "(?i)x",
		"[[:alpha:]]", "(?:b)?", `\w+`, "-", "header-[a-z]{1}", `"q";`, "x{2,}", " ", "}"}
	pathAtoms = append([]string{"x{2,3}", "[0-9]{4}"}, regexAtoms...)
)

// unboundedAtoms repeat without bound.
var unboundedAtoms = map[string]bool{".*": true, "[0-9]+": true, "[^/]*": true, `\w+`: true}

// regex is a regular expression value built from atoms, or an edge case.
func (g *gen) regex() string { return g.regexOf(regexAtoms) }

// regexOf is a regular expression built from atoms, or an edge case.
func (g *gen) regexOf(atoms []string) string {
	if g.bad() {
		// What RE2 and PCRE read differently, and what NGINX's syntax forbids.
		// And what PCRE2 could backtrack through for a long time.
		return oneOf(g, "(?=x)", `\1`, "a{1001}", "(", "a\nb", "é", "a\tb", "a{b", `\Qx\E`, "a{,2}", "\x00", `\z`, "[[:word:]]",
			"(?P<host>x)", "(?<n>a)", "(a+)+", "((a|aa)+)+b", "(a|a)*", `(\w+\s?)*`, "(a*)*", "^.*a.*a.*a$", "^(.*a){20}$")
	}
	var b strings.Builder
	if g.one(3) {
		b.WriteString("^")
	}
	unbounded := false
	for range 1 + g.intn(4) {
		a := oneOf(g, atoms...)
		if unboundedAtoms[a] {
			// Two unbounded repetitions that can read the same text are
			// refused as ReDoS-prone (the bad pool has such expressions):
			// most expressions have at most one, so that they render.
			if unbounded && !g.one(8) {
				a = "b"
			}
			unbounded = true
		}
		b.WriteString(a)
	}
	if g.one(3) {
		b.WriteString("$")
	}
	return b.String()
}

// regexPath is a RegularExpression path match.
func (g *gen) regexPath() string {
	r := g.regexOf(pathAtoms)
	if g.one(6) {
		return r
	}
	return "/" + strings.TrimPrefix(r, "^")
}

// headerName is a header to match or modify.
func (g *gen) headerName() string {
	if g.bad() {
		return oneOf(g, "X_A", "X A", "", "X-"+repeat("h", 255), "X-A:", `X"A`, "X-A;", "é")
	}
	switch g.intn(9) {
	case 0:
		return "X-A"
	case 1:
		return "x-a"
	case 2:
		return "X-B"
	case 3:
		return oneOf(g, "Host", "Connection", "Upgrade", "X-Forwarded-For", "X-Real-IP", "Content-Type")
	case 4:
		if g.edge() {
			// The longest name, and the lengths either side of the
			// longest a gRPC header table holds (46).
			return "X-" + repeat("h", oneOf(g, 254, 44, 45))
		}
		return "X-H"
	case 5:
		return oneOf(g, "a", "0", "X-1-2")
	case 6:
		return oneOf(g, "X-C", "X-D")
	case 7:
		return oneOf(g, "Access-Control-Allow-Origin", "Vary")
	}
	return "x-b"
}

// headerValue is a header value to match exactly or to set.
func (g *gen) headerValue() string {
	if g.bad() {
		// What HTTP forbids in a field value (not DEL or U+0085, which a
		// snapshot's YAML cannot hold).
		return oneOf(g, repeat("v", 4097), "a\r\nb", "a\x00", " a", "a ", "a\nb", "\t", "a\tb", "")
	}
	switch g.intn(9) {
	case 0:
		return "v"
	case 1:
		return "a"
	case 2:
		return "a,b"
	case 3:
		return "a b  c"
	case 4:
		return "!#%&()*+,./:<=>?@[]^_`|~-"
	case 5:
		if g.edge() {
			// Too long once written: the token, or '$' written as a variable.
			return oneOf(g, repeat("v", 4096), repeat("$", 400))
		}
		return "vv"
	case 6:
		// NGINX's syntax and variables, carried.
		return oneOf(g, `a"b`, "a;b", "a{b}", "a\\b", "a'b", `attachment; filename="a b.txt"`, `x"; } #`, "é ☃")
	case 7:
		return oneOf(g, "$remote_addr", "${request_id}", "$request_method", "$host", "$foo", "$uri", "$", "${", "$http_cookie")
	}
	return oneOf(g, "1", "yes", "text/html, q=1")
}

// queryName is a query parameter to match.
func (g *gen) queryName() string {
	if g.bad() {
		return oneOf(g, "a=b", "a&b", "a b", "", repeat("q", 257), "$q")
	}
	if g.edge() {
		return repeat("q", 256)
	}
	return oneOf(g, "q", "page", "a.b~c", "Q", "x-1")
}

// queryValue is a query parameter value to match exactly.
func (g *gen) queryValue() string {
	if g.bad() {
		return oneOf(g, "a&b", "a b", "a#b", `a"b`, repeat("w", 1025), "a\\b", "")
	}
	if g.edge() {
		return repeat("w", 1024)
	}
	return oneOf(g, "1", "a/b?c=d", "x~y", "%41", "$x", "a;b")
}

// method is an HTTP method to match.
func (g *gen) method() string {
	if g.bad() {
		return oneOf(g, "get", "FOO")
	}
	return oneOf(g, "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT")
}

// duration is a Gateway API duration.
func (g *gen) duration() string {
	if g.bad() {
		return oneOf(g, "10", "abc", "1d", "")
	}
	return oneOf(g, "10s", "500ms", "1h30m", "0s", "1ms", "75s", "76s", "99999h", "1h1m1s1ms")
}

// size is a ProxySettingsPolicy size.
func (g *gen) bufferSize() string {
	return oneOf(g, "4k", "8k", "16k", "1m", "4096", "32k", "0", "1024m", "1025m", "99999999999m", "1g", "", "12345678901234", "8K", "1M")
}
