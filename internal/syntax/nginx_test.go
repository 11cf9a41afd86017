package syntax_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestMaxTokenIsNginxs: real NGINX reads a quoted token of MaxToken bytes
// wherever it falls in its 4,096-byte read buffer and whatever follows it,
// and refuses one byte more unless a ';' follows at once; so MaxToken is
// the longest token that fits everywhere.
func TestMaxTokenIsNginxs(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	// How the token ends: with the directive, before a block, or at a line
	// end; tooLong says whether one byte more makes NGINX refuse it.
	ends := map[string]struct {
		write   func(tok string) string
		tooLong bool
	}{
		"directive": {func(tok string) string { return "set $gw_t " + tok + ";" }, false},
		"block":     {func(tok string) string { return "location = " + tok + " {}" }, true},
		"line":      {func(tok string) string { return "set $gw_t " + tok + "\n ;" }, true},
	}
	for name, end := range ends {
		for _, pad := range []int{0, 1, 7, 100, 3000} {
			for _, n := range []int{syntax.MaxToken, syntax.MaxToken + 1} {
				tok := syntax.Quote("/" + strings.Repeat("a", n-1))
				server := fmt.Sprintf("#%s\nserver {\n    listen 127.0.0.1:8080;\n    %s\n}\n", strings.Repeat("x", pad), end.write(tok))
				out, err := nginxtest.Test(minimal(server))
				refused := err != nil && strings.Contains(out, "too long parameter")
				if want := n > syntax.MaxToken && end.tooLong; refused != want || (err != nil && !refused) {
					t.Errorf("%s, pad %d: a token of %d bytes: refused %v, want %v: %s", name, pad, n, refused, want, out)
				}
			}
		}
	}
}

// minimal is an NGINX configuration of one http include holding servers.
func minimal(servers string) []config.File {
	main := "pid /var/run/nginx/nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n    include /etc/nginx/conf.d/servers.conf;\n}\n"
	return []config.File{
		{Path: config.MainConfPath, Data: []byte(main), Mode: 0o644},
		{Path: config.ServersConfPath, Data: []byte(servers), Mode: 0o644},
	}
}
