package syntax_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/syntax"
)

// d is a simple directive for expectations.
func d(name string, args ...string) syntax.Directive {
	return syntax.Directive{Name: name, Args: args}
}

// b is a block directive.
func b(name string, args []string, block ...syntax.Directive) syntax.Directive {
	if block == nil {
		block = []syntax.Directive{}
	}
	return syntax.Directive{Name: name, Args: args, Block: block}
}

// noLines clears the lines, which the expectations leave out.
func noLines(ds []syntax.Directive) []syntax.Directive {
	if ds == nil {
		return nil
	}
	out := make([]syntax.Directive, len(ds))
	for i, x := range ds {
		x.Line = 0
		if x.Block != nil {
			x.Block = noLines(x.Block)
		}
		out[i] = x
	}
	return out
}

func TestReadAccepts(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []syntax.Directive
	}{
		{"empty", "", nil},
		{"comment only", "# nothing\n", nil},
		{"one directive", "limit_conn addr 1;", []syntax.Directive{d("limit_conn", "addr", "1")}},
		{"spaces of every kind", "deny\tall ;\r\n allow\n10.0.0.0/8;", []syntax.Directive{d("deny", "all"), d("allow", "10.0.0.0/8")}},
		{"NGF's limit_except", "limit_except GET {\n  deny all;\n}\n",
			[]syntax.Directive{b("limit_except", []string{"GET"}, d("deny", "all"))}},
		{"empty block", "limit_except GET {}", []syntax.Directive{b("limit_except", []string{"GET"})}},
		{"comments end at the line", "deny all; # allow all;\nallow 1.2.3.4;", []syntax.Directive{d("deny", "all"), d("allow", "1.2.3.4")}},
		{"double quotes", `gzip_types "text/plain" 'text/css';`, []syntax.Directive{d("gzip_types", "text/plain", "text/css")}},
		{"quoted braces and semicolons", `x "a;b{c}d" '#e';`, []syntax.Directive{d("x", "a;b{c}d", "#e")}},
		{"escapes NGINX knows", `x "a\"b\\c\'d\te\nf\rg";`, []syntax.Directive{d("x", "a\"b\\c'd\te\nf\rg")}},
		{"other backslashes stay", `x "\d+\.";`, []syntax.Directive{d("x", `\d+\.`)}},
		{"an escaped quote does not close", `x 'it\'s';`, []syntax.Directive{d("x", "it's")}},
		{"raw newline inside quotes", "x \"a\nb\";", []syntax.Directive{d("x", "a\nb")}},
		{"empty quoted", `x "";`, []syntax.Directive{d("x", "")}},
		{"variables", "limit_conn_zone $binary_remote_addr zone=a:10m;", []syntax.Directive{d("limit_conn_zone", "$binary_remote_addr", "zone=a:10m")}},
		{"braced variable", "x ${host}suffix;", []syntax.Directive{d("x", "${host}suffix")}},
		{"a quote then a parenthesis starts a word", `if ($a = "b") {}`, []syntax.Directive{b("if", []string{"($a", "=", "b", ")"})}},
		{"quote right before ;", `x "a";`, []syntax.Directive{d("x", "a")}},
		{"quote right before {", `x "a"{}`, []syntax.Directive{b("x", []string{"a"})}},
		{"utf-8", "x \"é\";", []syntax.Directive{d("x", "é")}},
		{"longest word", "x " + strings.Repeat("a", syntax.MaxToken) + ";", []syntax.Directive{d("x", strings.Repeat("a", syntax.MaxToken))}},
		{"nested", "a { b { c; } }", []syntax.Directive{b("a", nil, b("b", nil, d("c")))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := syntax.Read(c.text)
			if err != nil {
				t.Fatalf("Read(%q): %v", c.text, err)
			}
			if !reflect.DeepEqual(noLines(got), c.want) {
				t.Errorf("Read(%q) = %#v, want %#v", c.text, got, c.want)
			}
		})
	}
}

func TestReadRefuses(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"a brace that closes the server", "deny all; }\nserver { listen 80;", `line 1: unexpected "}"`},
		{"an open block", "limit_except GET {\n deny all;\n", `line 1: the block of "limit_except" is not closed`},
		{"no semicolon at the end", "deny all", `line 1: directive "deny" has no ";" at its end`},
		{"no semicolon before }", "limit_except GET { deny all }", `directive "deny" has no ";" before "}"`},
		{"a semicolon alone", "deny all;;", `unexpected ";" with no directive`},
		{"a block without a name", "{ deny all; }", `unexpected "{" with no directive`},
		{"a brace inside a word", "limit_except GET { deny all}", `"}" inside the word "all"`},
		{"a quote inside a word", `deny a"ll";`, `a quote inside the word "a"`},
		{"a hash inside a word", "deny all#x;", `"#" inside the word "all"`},
		{"a backslash outside quotes", `deny all\;`, "a backslash outside quotes"},
		{"a backslash escaping a space", `x a\ b;`, "a backslash outside quotes"},
		{"unterminated quote", `x "abc;`, "line 1: a quoted string is not closed"},
		{"text right after a quote", `x "a"b;`, `"b" right after a quoted string`},
		{"a NUL", "deny all\x00;", "control character"},
		{"a vertical tab", "deny\vall;", "control character"},
		{"a form feed in a comment", "# \f\ndeny all;", "control character"},
		{"DEL", "deny all\x7f;", "control character"},
		{"a control character in quotes", "x \"a\x01\";", "control character"},
		{"an escaped control character in quotes", "x \"a\\\x01\";", "control character"},
		{"a broken braced variable", "x ${ho st};", `"${" must be followed by a variable name and "}"`},
		{"an unclosed braced variable", "x ${host;", `"${" must be followed`},
		{"a word too long", "x " + strings.Repeat("a", syntax.MaxToken+1) + ";", "longer than the 4093 NGINX reads"},
		{"a quoted string too long", "x \"" + strings.Repeat("a", syntax.MaxToken+1) + "\";", "longer than the 4093 NGINX reads"},
		{"too deep", strings.Repeat("a {", syntax.MaxDepth) + strings.Repeat("}", syntax.MaxDepth), "blocks nest deeper than 8"},
		{"the line of the error", "deny all;\n\nallow x\n", `line 3: directive "allow" has no ";"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, err := syntax.Read(c.text)
			if err == nil {
				t.Fatalf("Read(%q) = %v, want an error", c.text, ds)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read(%q): %v, want it to say %q", c.text, err, c.want)
			}
		})
	}
}

func TestReadLines(t *testing.T) {
	ds, err := syntax.Read("# top\ndeny all;\n\nlimit_except GET {\n\n  allow 1.2.3.4;\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Line != 2 || ds[1].Line != 4 || ds[1].Block[0].Line != 6 {
		t.Errorf("lines %d, %d, %d, want 2, 4, 6", ds[0].Line, ds[1].Line, ds[1].Block[0].Line)
	}
}

func TestFormat(t *testing.T) {
	ds := []syntax.Directive{
		d("limit_conn_zone", "$binary_remote_addr", "zone=addr:10m"),
		b("limit_except", []string{"GET"}, d("deny", "all")),
		d("x", "a b", `q"`, "", "${v}", "#c", "}", "t\tab"),
	}
	want := "limit_conn_zone $binary_remote_addr zone=addr:10m;\nlimit_except GET {\n    deny all;\n}\n" +
		"x \"a b\" \"q\\\"\" \"\" \"${v}\" \"#c\" \"}\" \"t\tab\";\n"
	if got := syntax.Format(ds); got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	back, err := syntax.Read(want)
	if err != nil || !reflect.DeepEqual(noLines(back), ds) {
		t.Errorf("Read(Format) = %#v, %v", back, err)
	}
}

// FuzzRead: whatever Read accepts, Format writes so that Read gives the
// same directives back; and Read never panics.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"limit_except GET {\n  deny all;\n}\n", "limit_conn_zone $binary_remote_addr zone=addr:10m;", `x "a\"b" 'c\'d' "\d";`,
		"x ${a}b;", `if ($a = "b") { return 403; }`, "# c\nx;\n", "a { b { c; } }", "x \"\n\";", `x "\\";`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ds, err := syntax.Read(text)
		if err != nil {
			return
		}
		out := syntax.Format(ds)
		back, err := syntax.Read(out)
		if err != nil {
			t.Fatalf("Read(%q) accepted, but its Format %q is refused: %v", text, out, err)
		}
		if !reflect.DeepEqual(noLines(back), noLines(ds)) {
			t.Fatalf("Read(%q) = %#v, but Read(Format) = %#v", text, ds, back)
		}
	})
}
