package syntax_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestGzipTypesAsNginx: CheckGzipTypes refuses every list of MIME types
// real NGINX cannot build its fixed table of gzip_types for, or builds
// with a warning on every reload ("could not build optimal"): long types,
// many of them, types whose NGINX hashes are equal (so that they share a
// bucket whatever the table's size); and NGINX says nothing (no duplicate
// warning) of what it takes.
func TestGzipTypesAsNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 42))
	word := func(n int) string {
		const chars = "abcdefghijklmnopqrstuvwxyz0123456789.+-_"
		b := make([]byte, n)
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		return string(b)
	}
	lists := [][]string{
		{"text/html", "TEXT/CSS", "text/css", "application/json"},
		{"a/" + strings.Repeat("b", syntax.MaxGzipType-2)},
		{"a/" + strings.Repeat("b", syntax.MaxGzipType-1)},
		// ngx_hash_key_lc("a~") == ngx_hash_key_lc("b_"): one bucket always.
		{"x/" + strings.Repeat("q", 10) + "a~", "x/" + strings.Repeat("q", 10) + "b_"},
		{"x/" + strings.Repeat("q", 20) + "a~", "x/" + strings.Repeat("q", 20) + "b_"},
	}
	for range 40 {
		n, l := 1+rng.IntN(32), 8+rng.IntN(45)
		var list []string
		for range n {
			list = append(list, "t/"+word(l-2))
		}
		lists = append(lists, list)
	}
	var configs [][]config.File
	for _, list := range lists {
		quoted := make([]string, len(list))
		for i, ty := range syntax.GzipTypes(list) {
			quoted[i] = syntax.Quote(ty)
		}
		configs = append(configs, minimal(fmt.Sprintf("gzip on;\ngzip_types %s;\nserver {\n    listen 127.0.0.1:8080;\n}\n", strings.Join(quoted, " "))))
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for i, list := range lists {
		clean := results[i].OK && len(nginxtest.Warnings(results[i].Output)) == 0
		err := syntax.CheckGzipTypes(list)
		if err == nil && !clean {
			t.Errorf("%d types of %d characters: CheckGzipTypes takes them, NGINX says: %s", len(list), len(list[0]), results[i].Output)
		}
		if !results[i].OK && err == nil {
			t.Errorf("%q: NGINX refused them", list)
		}
		if err != nil {
			refused++
		}
	}
	// CheckGzipTypes may refuse what NGINX would take (a long type alone:
	// its model of a bucket is NGINX's of its other tables), never the
	// reverse; the corpus must hold both verdicts to tell anything.
	if refused == 0 || refused == len(lists) {
		t.Errorf("%d of %d lists refused: the corpus does not tell anything", refused, len(lists))
	}
}
