package validation_test

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/validation"
)

// valueCase is one value given to a check of nginx_values.go: accepted when
// want is "", else refused with a message containing want.
type valueCase struct {
	name  string
	value string
	want  string
}

// checkValues runs a check on each case.
func checkValues(t *testing.T, check func(string) error, cases []valueCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := check(c.value)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("%q refused: %v", c.value, err)
			case c.want != "" && err == nil:
				t.Fatalf("%q accepted, want an error containing %q", c.value, c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("%q: error %q does not contain %q", c.value, err, c.want)
			}
		})
	}
}

const forbidden = "must not contain"

func TestHostname(t *testing.T) {
	checkValues(t, validation.Hostname, []valueCase{
		{"exact", "example.com", ""},
		{"single label", "localhost", ""},
		{"wildcard", "*.example.com", ""},
		{"map keyword", "include", ""},
		{"longest", strings.Repeat("a.", 126) + "a", ""},
		{"too long", strings.Repeat("a.", 126) + "ab", "more than the 253"},
		{"upper case", "Example.com", "lower-case DNS name"},
		{"inner wildcard", "a.*.example.com", "lower-case DNS name"},
		{"bare wildcard", "*", "lower-case DNS name"},
		{"semicolon", "example.com;", "lower-case DNS name"},
		{"port", "example.com:80", "lower-case DNS name"},
		{"trailing dot", "example.com.", "lower-case DNS name"},
		{"leading hyphen", "-example.com", "lower-case DNS name"},
		{"empty", "", "lower-case DNS name"},
	})
}

func TestExactHostname(t *testing.T) {
	checkValues(t, validation.ExactHostname, []valueCase{
		{"exact", "example.com", ""},
		{"wildcard", "*.example.com", "a wildcard is not allowed"},
		{"user info", "user@example.com", "lower-case DNS name"},
		{"port", "example.com:8080", "lower-case DNS name"},
		{"variable", "$host", "lower-case DNS name"},
	})
}

func TestMatchPath(t *testing.T) {
	checkValues(t, validation.MatchPath, []valueCase{
		{"root", "/", ""},
		{"path", "/api/v1", ""},
		{"trailing slash", "/api/", ""},
		{"sub-delims", "/a!&()*+,=:@~-._", ""},
		{"gatewall prefix", "/_gatewall/404", ""},
		{"percent", "/a%20b", "percent-encoded characters cannot be matched"},
		{"relative", "api", "must start with '/'"},
		{"semicolon", "/a;b", forbidden},
		{"variable", "/$uri", forbidden},
		{"brace", "/a{", forbidden},
		{"space", "/a b", forbidden},
		{"pipe", "/a|b", forbidden},
		{"double slash", "/a//b", "must not contain '//'"},
		{"dot segment", "/a/./b", "'.'/'..' segments"},
		{"dot-dot segment", "/a/..", "'.'/'..' segments"},
		{"too long", "/" + strings.Repeat("a", 1024), "more than the 1024"},
	})
}

func TestPath(t *testing.T) {
	checkValues(t, validation.Path, []valueCase{
		{"root", "/", ""},
		{"percent", "/a%20b", ""},
		{"path", "/new/prefix", ""},
		{"query", "/a?b", forbidden},
		{"quote", `/a"b`, forbidden},
		{"backslash", `/a\b`, forbidden},
		{"newline", "/a\nb", forbidden},
		{"dot-dot segment", "/../etc", "'.'/'..' segments"},
		{"too long", "/" + strings.Repeat("a", 1024), "more than the 1024"},
	})
}

func TestRegexPath(t *testing.T) {
	checkValues(t, validation.RegexPath, []valueCase{
		{"anchored", "^/api/v[0-9]+/users$", ""},
		{"quantifiers", "/[0-9a-f]{64}/x{1,3}/y{2,}", ""},
		{"lazy quantifier", "/a{2,3}?b+?", ""},
		{"alternation", "/(users|groups)/[^/]+", ""},
		{"flags", "(?i)/api(?s:.*)", ""},
		{"escapes", `/a\.b\d\w\S\x41\x{7f}\0\012`, ""},
		{"classes", `/[[:alpha:]\d-][-a-z]`, ""},
		{"escaped brace", `/a\{2\}`, ""},
		{"gatewall prefix", "^/_gatewall/.*", ""},
		// Carried in a quoted location, where NGINX interpolates nothing.
		{"quote", `^/a"b`, ""},
		{"semicolon", "^/a;", ""},
		{"space", "^/a b", ""},
		{"braces and semicolon", `^/a;}{2}`, ""},
		{"dollar inside", "^/$host", ""},
		{"newline", "^/a\nb", "only printable ASCII"},
		{"non-ASCII", "^/é", "only printable ASCII"},
		{"empty", "", "must not be empty"},
		{"named group", "/(?P<a>x)", "named groups are not allowed"},
		{"lookahead", "^/(?=a)", "does not compile"},
		{"backreference", `^/(a)\1`, "does not compile"},
		{"literal brace", "/a{", "braces are only allowed as quantifiers"},
		{"brace without minimum", "/a{,3}", "braces are only allowed as quantifiers"},
		{"large hex escape", `/x\x{100}`, "only \\x00 to \\x7f"},
		{"non-ASCII hex escape", `/x\xe9`, "only \\x00 to \\x7f"},
		{"octal without zero", `/\12`, "back-references"},
		{"large octal", `/a\777`, "back-references"},
		{"unicode class", `/\pL`, "Unicode classes"},
		{"negated unicode class", `/\P{Greek}`, "Unicode classes"},
		{"vertical space", `/\v`, "vertical tab"},
		{"quoting", `/\Q.*`, `\Q...\E quoting`},
		{"repeated anchor", "^*/a", "follows an anchor"},
		{"repeated word boundary", `/a\b+`, "follows an anchor"},
		{"zero repetitions", "/a{0}", "repeats nothing"},
		{"range from a class", `/[\d-z]`, "cannot start at a class"},
		{"range from a POSIX class", `/[[:alpha:]-z]`, "cannot start at a class"},
		{"collating element", "/[[.a.]]", "collating elements"},
		{"nested too deep", strings.Repeat("(", 101) + "/" + strings.Repeat(")", 101), "nested more than 100 deep"},
		{"too large", "/([a-z]x|y){1000}", "too large"},
		{"nested repetition", "^/(a+)+$", "time exponential"},
		{"segments", "^/(/[^/]+)+$", ""},
		{"three overlapping stars", "^/.*a.*a.*a$", "power 3"},
		{"too long", "/" + strings.Repeat("a", 1024), "more than the 1024"},
	})
}

func TestHeaderName(t *testing.T) {
	checkValues(t, validation.HeaderName, []valueCase{
		{"name", "X-Request-Id", ""},
		{"digits", "X1", ""},
		{"host", "Host", ""},
		{"underscore", "X_Id", "letters, digits and '-'"},
		{"leading hyphen", "-X", "letters, digits and '-'"},
		{"colon", "X:", "letters, digits and '-'"},
		{"semicolon", "X;", "letters, digits and '-'"},
		{"space", "X Y", "letters, digits and '-'"},
		{"empty", "", "letters, digits and '-'"},
		{"too long", strings.Repeat("x", 257), "more than the 256"},
	})
}

func TestHeaderValue(t *testing.T) {
	checkValues(t, validation.HeaderValue, []valueCase{
		{"empty", "", "must not be empty"},
		{"longest", strings.Repeat("v", 4096), ""},
		{"text", "text/html", ""},
		{"punctuation", "a b!#%&()*+,./:<=>?@[]^_`|~-", ""},
		// Carried: quoted and escaped (syntax.Quote), '$' written so that
		// only allow-listed variables are read (syntax.HeaderValue).
		{"semicolon", "a;b", ""},
		{"content disposition", `attachment; filename="a b.txt"`, ""},
		{"variable", "$host", ""},
		{"braced variable", "${remote_addr}", ""},
		{"lone dollar", "$", ""},
		{"brace", "{a}", ""},
		{"quote", `"a"`, ""},
		{"backslash", `a\b`, ""},
		{"backslash escapes NGINX reads", `\t\n\r\"\\`, ""},
		{"directive-like text", `x"; } server { listen 9; #`, ""},
		{"non-ASCII", "é ☃", ""},
		// Refused: what HTTP forbids in a field value.
		{"newline", "a\nb", "control character (U+000A)"},
		{"carriage return", "a\rb", "control character (U+000D)"},
		{"NUL", "a\x00b", "control character (U+0000)"},
		{"tab", "a\tb", "control character (U+0009)"},
		{"DEL", "a\x7fb", "control character (U+007F)"},
		{"next line", "a\u0085b", "control character (U+0085)"},
		{"not UTF-8", "a\xffb", "not UTF-8"},
		{"leading space", " a", "starts or ends with a space"},
		{"trailing space", "a ", "starts or ends with a space"},
		{"space", " ", "starts or ends with a space"},
		{"too long", strings.Repeat("v", 4097), "more than the 4096"},
	})
}

// regexValueCases hold for every regular expression value (header, query,
// gRPC service and method).
var regexValueCases = []valueCase{
	{"anchored", "^v[0-9]+$", ""},
	{"classes and escapes", `^[a-z]\d\.\x41[[:alpha:]]\s*$`, ""},
	{"flags", "(?i)bearer .+", ""},
	{"alternation", "a|b|", ""},
	// Carried in a quoted map key, where NGINX interpolates nothing.
	{"quote", `a"b`, ""},
	{"single quote", "a'b", ""},
	{"semicolon", "a;b", ""},
	{"space", "a b", ""},
	{"quantifier", "a{2}", ""},
	{"NGF's header quantifier", "header-[a-z]{1}", ""},
	{"bounded quantifiers", "^v{1,3}[0-9]{2,}x{0,2}$", ""},
	{"escaped braces", `\{a\}`, ""},
	{"closing brace", "a}", ""},
	{"dollar inside", "$host", ""},
	{"block-like text", `"; } location / \{ return 200; #`, ""},
	{"newline", "a\nb", "only printable ASCII"},
	{"tab", "a\tb", "only printable ASCII"},
	{"NUL", "a\x00", "only printable ASCII"},
	{"non-ASCII", "é", "only printable ASCII"},
	{"literal brace", "a{b", "braces are only allowed as quantifiers"},
	{"brace without minimum", "a{,3}", "braces are only allowed as quantifiers"},
	{"lookahead", "(?=a)", "does not compile"},
	{"named group", "(?P<remote_addr>x)", "named groups are not allowed"},
	{"short named group", "(?<gw_host>.*)", "named groups are not allowed"},
	{"quoted named group", "(?'n'x)", "does not compile"},
	{"octal", `a\777`, "back-references"},
	{"octal with zero", `a\012`, ""},
	{"hex escape", `\xff`, "only \\x00 to \\x7f"},
	{"unicode class", `\pL`, "Unicode classes"},
	{"vertical space", `\v`, "vertical tab"},
	{"octal escape", `\o`, "does not compile"},
	{"unterminated quoting", `\Qabc`, `\Q...\E quoting`},
	{"repeated anchor", "^*a", "follows an anchor"},
	{"range from a class", `[\w-.]`, "cannot start at a class"},
	{"nested too deep", strings.Repeat("(", 101) + "a" + strings.Repeat(")", 101), "nested more than 100 deep"},
	{"nested repetition", "((a|aa)+)+b", "time exponential"},
	{"repeated optional", "(a?)*b", "can match nothing"},
}

func TestRegexValue(t *testing.T) {
	checkValues(t, func(v string) error { return validation.RegexValue("gRPC service", v) }, append(regexValueCases,
		valueCase{"service", `helloworld\.Greeter`, ""},
		valueCase{"message names the value", "a\n", "gRPC service"},
	))
}

func TestHeaderValueRegex(t *testing.T) {
	checkValues(t, validation.HeaderValueRegex, append(regexValueCases,
		valueCase{"empty", "", "must not be empty"},
		valueCase{"too long", strings.Repeat("a", 4097), "more than the 4096"},
	))
}

func TestQueryParamValueRegex(t *testing.T) {
	checkValues(t, validation.QueryParamValueRegex, append(regexValueCases,
		valueCase{"empty", "", "must not be empty"},
		valueCase{"longest", strings.Repeat("a", 1024), ""},
		valueCase{"too long", strings.Repeat("a", 1025), "more than the 1024"},
	))
}

func TestGRPCService(t *testing.T) {
	checkValues(t, validation.GRPCService, []valueCase{
		{"service", "helloworld.Greeter", ""},
		{"underscores", "_a._b1", ""},
		{"longest", strings.Repeat("s", 1024), ""},
		{"too long", strings.Repeat("s", 1025), "more than the 1024"},
		{"far too long", strings.Repeat("s", 4100), "more than the 1024"},
		{"empty", "", "must not be empty"},
		{"leading dot", ".a.B", "not a valid service name"},
		{"slash", "a/b", "not a valid service name"},
		{"digit first", "1a", "not a valid service name"},
	})
}

func TestGRPCMethod(t *testing.T) {
	checkValues(t, validation.GRPCMethod, []valueCase{
		{"method", "SayHello", ""},
		{"longest", strings.Repeat("m", 1024), ""},
		{"too long", strings.Repeat("m", 1025), "more than the 1024"},
		{"far too long", strings.Repeat("m", 4100), "more than the 1024"},
		{"dot", "a.b", "not a valid method name"},
		{"empty", "", "must not be empty"},
	})
}

func TestGRPCRegex(t *testing.T) {
	checkValues(t, func(v string) error { return validation.GRPCRegex("method", v) }, append(regexValueCases,
		valueCase{"longest", strings.Repeat("m", 1024), ""},
		valueCase{"too long", strings.Repeat("m", 1025), "gRPC method is 1025 characters long, more than the 1024"},
		valueCase{"far too long", "(" + strings.Repeat("m", 4100) + ")", "more than the 1024"},
	))
}

func TestListLength(t *testing.T) {
	if err := validation.ListLength("headers", 16, validation.MaxMatchHeaders); err != nil {
		t.Errorf("16 headers refused: %v", err)
	}
	err := validation.ListLength("headers", 17, validation.MaxMatchHeaders)
	if err == nil || !strings.Contains(err.Error(), "headers has 17 items, more than the 16") {
		t.Errorf("17 headers: got %v", err)
	}
}

func TestQueryParamName(t *testing.T) {
	checkValues(t, validation.QueryParamName, []valueCase{
		{"name", "page", ""},
		{"characters", "a.b_c~d!e*f+g%20-", ""},
		{"parenthesis", "a(b)", "must use only letters"}, // not a Gateway API header-name character
		{"comma", "a,b", "must use only letters"},
		{"colon", "a:b", "must use only letters"},
		{"at", "a@b", "must use only letters"},
		{"empty", "", "must use only letters"},
		{"equals", "a=b", "must use only letters"},
		{"ampersand", "a&b", "must use only letters"},
		{"semicolon", "a;", "must use only letters"},
		{"variable", "$args", "must use only letters"},
		{"too long", strings.Repeat("q", 257), "more than the 256"},
	})
}

func TestQueryParamValue(t *testing.T) {
	checkValues(t, validation.QueryParamValue, []valueCase{
		{"empty", "", "must not be empty"},
		{"longest", strings.Repeat("v", 1024), ""},
		{"value", "a/b?c=d", ""},
		{"ampersand", "a&b", "URI query characters"},
		{"space", "a b", "URI query characters"},
		{"quote", `a"b`, "URI query characters"},
		// Carried: matched inside a quoted regex, each character escaped.
		{"variable", "$args", ""},
		{"sub-delims", "a;b'c$", ""},
		{"too long", strings.Repeat("v", 1025), "more than the 1024"},
	})
}

func TestHTTPMethod(t *testing.T) {
	checkValues(t, validation.HTTPMethod, []valueCase{
		{"GET", "GET", ""},
		{"PATCH", "PATCH", ""},
		{"CONNECT", "CONNECT", ""},
		{"lower case", "get", "not an HTTP method"},
		{"unknown", "PURGE", "not an HTTP method"},
		{"injection", "GET; evil", "not an HTTP method"},
		{"empty", "", "not an HTTP method"},
	})
}

func TestObjectReference(t *testing.T) {
	cases := []struct {
		name, namespace, object, want string
	}{
		{"plain", "default", "app", ""},
		{"dotted name", "default", "app.v1", ""},
		{"longest name", "default", strings.Repeat("a", 253), ""},
		{"name too long", "default", strings.Repeat("a", 254), "is not a valid object name"},
		{"name with semicolon", "default", "app;}", "is not a valid object name"},
		{"name with slash", "default", "../app", "is not a valid object name"},
		{"upper-case name", "default", "App", "is not a valid object name"},
		{"empty name", "default", "", "is not a valid object name"},
		{"dotted namespace", "a.b", "app", "is not a valid namespace name"},
		{"namespace too long", strings.Repeat("n", 64), "app", "is not a valid namespace name"},
		{"empty namespace", "", "app", "is not a valid namespace name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validation.ObjectReference(c.namespace, c.object)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
