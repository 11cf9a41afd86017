package validation

import (
	"strings"
	"testing"
)

func TestBacktracking(t *testing.T) {
	const exp, poly, empty = "exponential", "power", "can match nothing"
	cases := []struct {
		name, re, want string
	}{
		// Nested unbounded repetition.
		{"plus of plus", `(a+)+$`, exp},
		{"star of a star of overlapping branches", `((a|aa)*)*b`, empty},
		{"plus of a plus of overlapping branches", `((a|aa)+)+b`, exp},
		{"star of a star", `(a*)*b`, empty},
		{"plus of star", `^(a*)+$`, empty},
		{"star of an optional", `^(a?)*$`, empty},
		{"bounded optionals", `^(a?){30}a{30}$`, empty},
		{"bounded group that can be empty", `^(a|b?){2}$`, empty},
		{"one optional", `^(a?){1}b$`, ""},
		{"words and optional spaces", `^(\w+\s?)*$`, exp},
		{"anything then comma, repeated", `^(.*,)+x$`, exp},
		{"class repeated in a repeated group", `^([a-z0-9]+)*\.example$`, exp},
		{"unbounded repetition of a plus", `^(a+){2,}$`, exp},
		{"quantified group of quantified items", `^(x\d+\d+)+$`, exp},
		// Alternation whose branches overlap, repeated.
		{"same branch twice", `^(a|a)*$`, exp},
		{"branch and its double", `^(a|aa)+$`, exp},
		{"class and a member", `^([a-z]|x)*$`, exp},
		{"dot and a letter", `^(.|a)*$`, exp},
		{"overlapping case-insensitive branches", `^(?i:(A|a))*$`, exp},
		// Unambiguous repetition.
		{"segments", `^(/[^/]+)+$`, ""},
		{"segments, unanchored", `(/[^/]+)+`, ""},
		{"disjoint branches", `^(a|b)*$`, ""},
		{"branches with distinct first bytes", `^(ab|cd|e)+$`, ""},
		{"dash-separated words", `^(\w+-)*\w+$`, ""},
		{"case-sensitive distinct branches", `^(A|a)*$`, ""},
		{"escaped dot and letters", `^([a-z]+\.)+[a-z]+$`, ""},
		{"escaped plus", `^a\+\+$`, ""},
		{"escaped parentheses", `^\(a\+\)\+$`, ""},
		{"escaped star in a class", `^([*]a)*$`, ""},
		// Bounded repetition.
		{"bounded of bounded", `^(a{1,3}){1,3}$`, ""},
		{"bounded of bounded, under the limit", `^(a{1,6}){1,6}$`, ""},
		{"bounded of bounded, over the limit", `^(a{1,8}){1,8}$`, "ways"},
		{"bounded alternation", `^(a|b){1,10}$`, ""},
		{"bounded of a plus, twice", `^(a+){2}$`, ""},
		{"bounded of a plus, three times", `^(a+){3}$`, poly},
		{"bounded of anything, many times", `^(.*a){20}$`, poly},
		{"bounded overlapping digits", `^\d{1,3}\d{1,3}$`, ""},
		{"bounded overlapping digits, unanchored", `\d{1,3}\d{1,3}`, ""},
		{"NGF's header quantifier", `header-[a-z]{1}`, ""},
		{"segments with bounded lengths", `^[a-z]{1,64}(-[a-z]{1,64}){0,10}$`, ""},
		{"dotted quad", `^(\d{1,3}\.){3}\d{1,3}$`, ""},
		{"two long bounded wildcards anchored", `^.{0,1000}a.{0,1000}$`, ""},
		{"two long bounded digit runs anchored", `^[0-9]{1,1000}[0-9]{1,1000}$`, ""},
		{"small ambiguous alternation, bounded", `^(a|aa){1,8}$`, ""},
		{"ambiguous branches written out, anchored", "^" + strings.Repeat("(a|a)", 16) + "$", ""},
		{"more ambiguous branches written out, anchored", "^" + strings.Repeat("(a|a)", 17) + "$", "131072 ways"},
		// Bounded repetition of what matches one text in several ways:
		// the ways are fixed by the expression, and can be anything.
		{"large bounded repetition of overlapping branches", `^(a|aa){1,200}$`, exp},
		{"large bounded repetition of a branch and its double", `^(a|b|ab){1,500}$`, exp},
		{"twenty ambiguous copies", `^(a|a){20}$`, exp},
		{"bounded of bounded, large", `^(a{1,10}){1,10}$`, exp},
		{"three long bounded runs", `^a{1,1000}a{1,1000}a{1,1000}$`, poly},
		{"two long bounded wildcards unanchored", `.{0,1000}a.{0,1000}b`, poly},
		{"small repetitions nested", `^((a|a){8}){8}$`, "ways"},
		{"small repetitions nested twice", `^(((a|a){3}){3}){3}$`, "ways"},
		{"ambiguous branches written out, unanchored", strings.Repeat("(a|a)", 4), "16 ways"},
		{"few ambiguous branches written out, unanchored", strings.Repeat("(a|a)", 3), ""},
		// Polynomial.
		{"two stars anchored", `^/api/.*/v1/.*$`, ""},
		{"three stars anchored", `^.*a.*a.*a$`, poly},
		{"three adjacent pluses", `^\d+\d+\d+$`, poly},
		{"two stars unanchored", `/api/.*/users/.*`, poly},
		{"one star unanchored", `/api/.*\.php$`, ""},
		{"classes that exclude what follows", `/api/[^/]*/users/[^/]*`, ""},
		{"flag group before the anchor", `(?i)^/api/.*/v1/.*$`, ""},
		{"typical path", `^/api/v[0-9]+/users/[^/]+$`, ""},
		{"gRPC method names", `Check|Watch`, ""},
		{"bearer token", `^Bearer [A-Za-z0-9._~+/-]+=*$`, ""},
		{"alternation with a longer branch", `^(a|ab)*c$`, ""},
		{"overlapping alternation without repetition", `^(ab|a)(bc|c)$`, ""},
		{"decimal number unanchored", `\d+\.\d+`, ""},
		{"two adjacent stars anchored", `^a*a*$`, ""},
		{"three adjacent stars anchored", `^a*a*a*$`, poly},
		{"escaped dots repeated", `^(\.+)+$`, exp},
		{"escaped dots in a class repeated", `^([.]a|[.]b)+$`, ""},
		{"case-insensitive flag overlapping", `(?i)^(a|A)+$`, exp},
		{"long literal", "^/" + strings.Repeat("segment/", 120) + "end$", ""},
		{"long literal unanchored", strings.Repeat("v", 4000), ""},
		{"uuid", `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := backtracking(c.re)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("%s refused: %v", c.re, err)
			case c.want != "" && err == nil:
				t.Fatalf("%s accepted, want %s backtracking", c.re, c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("%s: %v, want %s", c.re, err, c.want)
			}
		})
	}
}

// BenchmarkBacktracking checks typical and large expressions.
func BenchmarkBacktracking(b *testing.B) {
	for _, re := range []string{
		`^/api/v[0-9]+/users/[^/]+$`,
		`(?i)^/(foo|bar|baz)/.*\.(png|jpe?g|gif)$`,
		"^/" + strings.Repeat(`[a-z0-9]{1,8}/`, 60) + "x$",
		strings.Repeat("v", 4000),
	} {
		b.Run(re[:min(len(re), 20)], func(b *testing.B) {
			for range b.N {
				if err := backtracking(re); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
