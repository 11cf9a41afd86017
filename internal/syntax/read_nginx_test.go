package syntax_test

import (
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// args are what the generated snippets' arguments are made of: words,
// quoted strings with escapes, and what NGINX reads otherwise than a
// person would (Read refuses those on purpose).
var args = []string{
	"a", "b1", "text/html", "gif", "$x", "${x}", "é", `"q"`, `'q'`, `"a\"b"`, `"a;b"`, `'a}'`, `""`, `"a\nb"`, `"\d"`,
	`'it\'s'`, `"\\"`, "\"a\nb\"", `"x")`,
	"${x", "${}", "a}", "a{", "a#b", `a"b`, "a'b", `a\ b`, `\;`, `"x"y`, `"open`, "\x00", "\x0b", "\x7f",
}

// ends end the generated statements, mostly as they should.
var ends = []string{";", ";", ";", ";", ";\n", " ;", "", "{}", "{ x; }", "}", ";;", ";}"}

// spaces separate words, comments included.
var spaces = []string{" ", " ", " ", "\t", "\n", "\r\n", " #c\n", " # }\n"}

// generate makes n snippets of one to four statements, the same ones
// every run.
func generate(n int) []string {
	rng := rand.New(rand.NewSource(40))
	pick := func(from []string) string { return from[rng.Intn(len(from))] }
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for st := 1 + rng.Intn(4); st > 0; st-- {
			b.WriteString(pick([]string{"x", "text/plain", `"q"`, "a}", "#"}))
			for a := rng.Intn(4); a > 0; a-- {
				b.WriteString(pick(spaces))
				b.WriteString(pick(args))
			}
			b.WriteString(pick(ends))
			b.WriteString(pick(spaces))
		}
		out[i] = b.String()
	}
	return out
}

// deliberate are the messages of Read's refusals of text NGINX reads
// (docs of Read): text whose reading a person would likely get wrong.
var deliberate = []string{"inside the word", "a backslash outside quotes", "control character", `"${" must be followed`}

// TestReadAgreesWithNginx compares Read's decisions with real NGINX's on
// generated snippets, read where NGINX takes any directive with any
// arguments and no block: as the entries of a types block (an included
// file, as Gatewall includes snippets). Whatever Read accepts NGINX reads
// (and refuses a block there); whatever NGINX refuses Read refuses; what
// Read refuses and NGINX reads is one of Read's deliberate refusals.
func TestReadAgreesWithNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	snippets := generate(600)
	configs := make([][]config.File, len(snippets))
	for i, s := range snippets {
		configs[i] = []config.File{
			nginxtest.ServerConf("listen 127.0.0.1:8080;\ntypes { include /etc/nginx/snippet.conf; }"),
			{Path: "/etc/nginx/snippet.conf", Data: []byte(s), Mode: 0o644},
		}
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	var bothRead, bothRefuse, strict int
	for i, s := range snippets {
		ds, rerr := syntax.Read(s)
		nginx := results[i]
		switch {
		case rerr == nil && hasBlock(ds):
			if nginx.OK || !strings.Contains(nginx.Output, `unexpected "{"`) {
				t.Errorf("Read(%q) reads a block; NGINX's types block should refuse it: %s", s, nginx.Output)
			}
			bothRefuse++
		case rerr == nil:
			if !nginx.OK {
				t.Errorf("Read(%q) = %v, but NGINX refuses it: %s", s, ds, nginx.Output)
			}
			bothRead++
		case !nginx.OK:
			bothRefuse++
		default:
			if !containsAny(rerr.Error(), deliberate) {
				t.Errorf("Read(%q) refuses it (%v), NGINX reads it, and it is not a deliberate refusal", s, rerr)
			}
			strict++
		}
	}
	t.Logf("%d snippets: %d read by both, %d refused by both, %d read by NGINX and refused by Read on purpose", len(snippets), bothRead, bothRefuse, strict)
	if bothRead < 50 || bothRefuse < 50 || strict < 50 {
		t.Errorf("the corpus does not exercise every outcome: %d, %d, %d", bothRead, bothRefuse, strict)
	}
}

func hasBlock(ds []syntax.Directive) bool {
	for _, d := range ds {
		if d.Block != nil {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// wordPieces make the words of TestReadValuesAreNginxs: escapes of every
// kind, punctuation NGINX reads specially outside quotes, spaces.
var wordPieces = []string{`a`, `Z`, `9`, `\"`, `\'`, `\\`, `\n`, `\t`, `\r`, `\d`, `\x`, `;`, `{`, `}`, `#`, ` `, "\t", "\n", `é`, `(`, `)`, `/`, `=`, `'`, `"`}

// TestReadValuesAreNginxs: each generated word that Read reads as one
// value is what real NGINX makes of it: a location returns it as its body
// (return 200 <word>), which must be Read's value byte for byte.
func TestReadValuesAreNginxs(t *testing.T) {
	nginxtest.RequireRoot(t)
	rng := rand.New(rand.NewSource(41))
	var words, values []string
	for len(words) < 300 {
		var b strings.Builder
		for j := rng.Intn(8); j >= 0; j-- {
			b.WriteString(wordPieces[rng.Intn(len(wordPieces))])
		}
		var w string
		switch rng.Intn(3) {
		case 0:
			w = `"` + b.String() + `"`
		case 1:
			w = `'` + b.String() + `'`
		default:
			w = b.String()
		}
		ds, err := syntax.Read("return 200 " + w + ";")
		if err != nil || len(ds) != 1 || len(ds[0].Args) != 2 || ds[0].Args[1] == "" {
			continue
		}
		words, values = append(words, w), append(values, ds[0].Args[1])
	}
	var locs strings.Builder
	for i, w := range words {
		fmt.Fprintf(&locs, "location = /w/%d { return 200 %s; }\n", i, w)
	}
	s, err := nginxtest.Serve([]config.File{nginxtest.ServerConf("listen 127.0.0.1:8080;\ndefault_type text/plain;\n" + locs.String())}, 8080)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c := &http.Client{Transport: &http.Transport{DialContext: s.DialContext}}
	for i, want := range values {
		resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:8080/w/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != want {
			t.Errorf("word %s: NGINX returns %q, Read reads %q", words[i], body, want)
		}
	}
}
