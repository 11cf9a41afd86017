package syntax_test

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/syntax"
)

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"a b", `"a b"`},
		{`a"b`, `"a\"b"`},
		{`a\b`, `"a\\b"`},
	}
	for _, c := range cases {
		if got := syntax.Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.want)
		}
		if got, want := syntax.QuotedLength(c.in), len(syntax.Quote(c.in))-2; got != want {
			t.Errorf("QuotedLength(%q) = %d, want %d", c.in, got, want)
		}
	}
}

func TestCheckToken(t *testing.T) {
	cases := []struct {
		name string
		s    string
		ok   bool
	}{
		{"longest", strings.Repeat("a", syntax.MaxToken), true},
		{"one more", strings.Repeat("a", syntax.MaxToken+1), false},
		{"escapes count", strings.Repeat("a", syntax.MaxToken-1) + `\`, false},
	}
	for _, c := range cases {
		err := syntax.CheckToken("value", c.s)
		if (err == nil) != c.ok {
			t.Errorf("%s: got %v", c.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "value takes 4094 bytes") {
			t.Errorf("%s: message %q", c.name, err)
		}
	}
}
