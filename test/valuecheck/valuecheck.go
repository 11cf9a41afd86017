// Package valuecheck holds adversarial header values and regular
// expressions for Gatewall's injection tests, and what NGINX must make of
// a value that is carried: the tests feed the values through the graph,
// the renderer, confcheck and real NGINX, and compare what NGINX reads or
// sends with what this package says the user asked for.
//
// Its readings are written apart from the renderer's (package syntax), so
// that a renderer that writes a value wrongly disagrees with them:
//
//   - Expand is what a receiver gets for a header value: its text, with
//     each NGINX variable of the allow-list (syntax.ValueVariables, the
//     specification), written $name or ${name}, replaced by the variable's
//     value; every other '$' is text;
//   - Interpolate is how NGINX reads a string where it interpolates
//     variables (ngx_http_script_compile): each '$' starts a variable,
//     $name or ${name}, and one that starts none is an error.
//
// The package is pure.
package valuecheck

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/gatewall/gatewall/internal/syntax"
)

// variableRE finds what could be a variable in a user's header value: a
// braced name, or the longest run of name characters after '$', as NGINX
// reads a name.
var variableRE = regexp.MustCompile(`\$(\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))`)

// Expand is what a receiver gets for the header value v: literal(text) for
// its text, and variable(name) for each allow-listed variable it reads.
func Expand(v string, literal, variable func(string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range variableRE.FindAllStringSubmatchIndex(v, -1) {
		var name string
		if m[4] >= 0 { // braced
			name = v[m[4]:m[5]]
		} else {
			name = v[m[6]:m[7]]
		}
		if !syntax.ValueVariable(name) {
			continue // text, '$' included
		}
		b.WriteString(literal(v[last:m[0]]))
		b.WriteString(variable(name))
		last = m[1]
	}
	b.WriteString(literal(v[last:]))
	return b.String()
}

// Variables lists the allow-listed variables v reads.
func Variables(v string) []string {
	var out []string
	Expand(v, func(string) string { return "" }, func(name string) string {
		out = append(out, name)
		return ""
	})
	return out
}

// Interpolate reads s as NGINX reads a string where it interpolates
// variables, giving each variable the value value(name) returns; ok false
// means the variable is one the test does not expect, and Interpolate
// fails naming it.
func Interpolate(s string, value func(name string) (string, bool)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		i++
		braced := i < len(s) && s[i] == '{'
		if braced {
			i++
		}
		start := i
		for i < len(s) && isNameByte(s[i]) {
			i++
		}
		name := s[start:i]
		if braced {
			if i >= len(s) || s[i] != '}' {
				return "", fmt.Errorf("%q: the closing bracket of a variable is missing", s)
			}
			i++
		}
		if name == "" {
			return "", fmt.Errorf("%q: a '$' starts no variable", s)
		}
		v, ok := value(name)
		if !ok {
			return "", fmt.Errorf("%q reads $%s", s, name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// fixedValues are the values every run checks: the shapes NGF's guides and
// the Gateway API's examples use, attacks on NGINX's syntax and on HTTP, variables on
// either side of the allow-list, and the edges of the length limits.
var fixedValues = []string{
	// What users write.
	"$remote_addr", "$request_method", "${request_id}", "only-this-value", "compress",
	`attachment; filename="a b.txt"`, "text/html; charset=utf-8", `W/"etag"`, `{"json": [1, 2]}`,
	"max-age=0, must-revalidate", "client=$remote_addr:$remote_port; id=${request_id}",
	"$scheme://$host$request_uri", "$proxy_add_x_forwarded_for",
	// '$' that is not an allow-listed variable: text.
	"$", "$$", "$$remote_addr", "price: 5$", "$foo", "literal $foo stays", "${foo}", "${", "${}", "$}", "${remote_addr",
	"$remote_addrx", "${remote_addr}x", "$remote_addr-x", "$1", "$0", "$Remote_Addr", "$ remote_addr",
	"$uri", "$document_uri", "${remote_user}", "$http_authorization", "$http_cookie", "$cookie_session",
	"$ssl_client_raw_cert", "$upstream_addr", "$server_addr", "$hostname", "$gw_host", "$gw_dollar", "${gw_dollar}",
	"$request_body", "$realpath_root",
	// NGINX's configuration syntax.
	`"`, `\`, `a\`, `\\`, `\"`, `\t`, `\n`, `\r`, `\x41`, `'`, ";", "{", "}", "#", "# comment", "${ }",
	`x"; } server { listen 81; return 200; } #`, `x\"; proxy_pass http://attacker; #`, "include /etc/passwd;",
	`"$remote_addr"`, `\$remote_addr`, `\${request_id}`,
	// UTF-8.
	"é", "☃ unicode ✓", "\u2028", "日本語",
	// What HTTP forbids: refused.
	"a\nb", "a\r\nX-Injected: 1", "a\rb", "a\x00b", "a\tb", "\x7f", "a\u0085b", "\x01", " a", "a ", " ", "",
	"a\xffb",
}

// atoms build generated values.
var atoms = []string{
	"a", "Z", "0", " ", `"`, `\`, "$", "${", "}", "{", ";", "#", "'", ",", "=", "/", "é", "☃",
	"$remote_addr", "${request_id}", "$host", "$request_uri", "$uri", "${http_cookie}", "$gw_dollar", "$1",
	`\"`, `\n`, "%0d%0a", "\u2028",
	// Refused wherever they are.
	"\t", "\n", "\r", "\x00", "\x7f", "\u0085",
}

// Values returns the fixed values then n generated from r: one to eight
// atoms, now and then repeated into a value near NGINX's 4,093-byte token
// or the Gateway API's 4,096-character limit.
func Values(r *rand.Rand, n int) []string {
	out := append([]string(nil), fixedValues...)
	out = append(out, strings.Repeat("v", syntax.MaxToken), strings.Repeat("v", syntax.MaxToken+1), strings.Repeat("v", 4096),
		strings.Repeat(`"`, syntax.MaxToken/2), strings.Repeat(`"`, syntax.MaxToken/2+1), strings.Repeat("$", 300), strings.Repeat("$", 400),
		strings.Repeat("$remote_addr", 341))
	for range n {
		var b strings.Builder
		for range 1 + r.IntN(8) {
			b.WriteString(atoms[r.IntN(len(atoms))])
		}
		v := b.String()
		if r.IntN(16) == 0 {
			target := syntax.MaxToken - 40 + r.IntN(100)
			v = strings.Repeat(v, target/len(v)+1)[:target]
		}
		out = append(out, v)
	}
	return out
}

// fixedRegexes are the regular expressions every run checks: the shapes of
// NGF's advanced-routing and gRPC guides, quantifiers, NGINX's syntax in
// quotes, and what must stay refused.
var fixedRegexes = []string{
	"variant-[a-z]{1}", "pick-[a-z]{1}", "rpc-variant-[a-z]{1}", "^v{1,3}$", "a{2,}b", "[0-9]{2,4}", "^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$",
	`"quoted"`, "a;b", `\{x\}`, "a}", "$", "a$b", "^a$|^b$", `x"; } server { #`, "a b", "#", `\\`, `\"`, "'", `(?i)bearer [a-z]{2,}`,
	// Refused: braces that are no quantifier, what PCRE2 reads differently,
	// backtracking, control characters, non-ASCII.
	"a{", "a{,3}", "a{0}", `\1`, "(?P<remote_addr>x)", "(a+)+$", "(a{1,3}){2,}$", "a\nb", "a\tb", "é", "(?=x)",
}

// regexAtoms build generated regular expressions.
var regexAtoms = []string{"a", "b", "-", ".", `\.`, "[a-z]", "[0-9]", `\d`, " ", `"`, "'", ";", "#", "$", "^", "}", "{", `\{`, `\}`,
	"(a|b)", "(?:x)", "|", `\\`, `\"`}

var regexQuantifiers = []string{"", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "{0,2}", "{1}?"}

// Regexes returns the fixed regular expressions then n generated from r.
func Regexes(r *rand.Rand, n int) []string {
	out := append([]string(nil), fixedRegexes...)
	for range n {
		var b strings.Builder
		for range 1 + r.IntN(5) {
			b.WriteString(regexAtoms[r.IntN(len(regexAtoms))])
			b.WriteString(regexQuantifiers[r.IntN(len(regexQuantifiers))])
		}
		out = append(out, b.String())
	}
	return out
}

// Samples are header values to match a regular expression against: parts
// of re and of its own alphabet, so that some match and some do not.
func Samples(r *rand.Rand, re string, n int) []string {
	letters := []string{"a", "b", "x", "-", ".", "0", "7", " ", `"`, "'", ";", "#", "$", "{", "}", `\`, "variant-", "pick-", "q"}
	var out []string
	for range n {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(letters[r.IntN(len(letters))])
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	for _, lit := range regexp.MustCompile(`[A-Za-z0-9 ;"'#-]+`).FindAllString(re, -1) {
		out = append(out, strings.TrimSpace(lit), strings.TrimSpace(lit+lit))
	}
	var kept []string
	for _, s := range out {
		if s != "" {
			kept = append(kept, s)
		}
	}
	return kept
}
