package config

import (
	"regexp"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"
)

func TestCovers(t *testing.T) {
	prefix := func(v string) graph.PathMatch { return graph.PathMatch{Type: graph.PathPrefix, Value: v} }
	exact := func(v string) graph.PathMatch { return graph.PathMatch{Type: graph.PathExact, Value: v} }
	cases := []struct {
		p    graph.PathMatch
		k    locKey
		want bool
	}{
		{prefix("/"), locKey{"", "/"}, true},
		{prefix("/"), locKey{"=", "/api"}, true},
		{prefix("/api"), locKey{"=", "/api"}, true},
		{prefix("/api"), locKey{"", "/api/"}, true},
		{prefix("/api"), locKey{"", "/api/v2/"}, true},
		{prefix("/api"), locKey{"", "/apiv2/"}, false},
		{prefix("/api"), locKey{"=", "/apiv2"}, false},
		{prefix("/api/v2"), locKey{"", "/api/"}, false},
		{exact("/api"), locKey{"=", "/api"}, true},
		{exact("/api"), locKey{"", "/api/"}, false},
		{graph.PathMatch{Type: graph.PathRegex, Value: "^/a"}, locKey{"~", "^/a"}, true},
		{prefix("/"), locKey{"~", "^/a"}, false},
	}
	for _, c := range cases {
		if got := covers(c.p, c.k); got != c.want {
			t.Errorf("covers(%+v, %+v) = %v, want %v", c.p, c.k, got, c.want)
		}
	}
}

// TestPrefixRewrite checks ReplacePrefixMatch on real paths with the regex and
// replacement NGINX gets (PCRE named groups behave like Go's here).
func TestPrefixRewrite(t *testing.T) {
	cases := []struct{ prefix, repl, path, want string }{
		{"/prefix/one", "/one", "/prefix/one/two", "/one/two"},
		{"/prefix/one", "/one", "/prefix/one", "/one"},
		{"/strip", "/", "/strip/three", "/three"},
		{"/strip", "/", "/strip", "/"},
		{"/strip", "/", "/strip/", "/"},
		{"/old", "/new/", "/old/x", "/new/x"},
		{"/", "/api", "/x", "/api/x"},
		{"/", "/", "/x/y", "/x/y"},
	}
	for _, c := range cases {
		regex, value := prefixRewrite(c.prefix, c.repl)
		re := regexp.MustCompile(regex)
		m := re.FindStringSubmatch(c.path)
		if m == nil {
			t.Errorf("prefix %q: regex %q does not match %q", c.prefix, regex, c.path)
			continue
		}
		rest := m[re.SubexpIndex("gw_rest")]
		got := regexp.MustCompile(`\$gw_rest`).ReplaceAllLiteralString(value, rest)
		if got != c.want {
			t.Errorf("prefix %q -> %q on %q = %q, want %q", c.prefix, c.repl, c.path, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{`a`: `"a"`, `a"b`: `"a\"b"`, `a\b`: `"a\\b"`, `^/x\.png$`: `"^/x\\.png$"`} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
