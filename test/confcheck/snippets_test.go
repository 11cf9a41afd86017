package confcheck

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/snippets"
)

// TestSnippetsRepeatNothingGatewallWrites: no directive NGINX takes once
// per block, of those snippets may hold, is one the renderer writes in a
// context where snippets may hold it (http level, route servers and
// locations): the two could only meet in a configuration NGINX refuses.
// (In an enclosing block it is inherited and overridden, as the
// NginxProxy's gzip settings at http level by a server's snippet.)
func TestSnippetsRepeatNothingGatewallWrites(t *testing.T) {
	contexts := map[string]string{"http": ctxHTTP, "http.server": ctxServer, "http.server.location": ctxLocation}
	for name, places := range snippets.Allowed() {
		if !snippets.Once(name) {
			continue
		}
		r, ok := rules[name]
		if !ok {
			continue
		}
		for _, place := range places {
			ctx, ok := contexts[place]
			if !ok {
				t.Fatalf("snippets may hold %s in %s, which this test does not know", name, place)
			}
			if contains(r.ctx, ctx) {
				t.Errorf("snippets may hold %s, which NGINX takes once per block and Gatewall writes in %s context", name, ctx)
			}
		}
	}
}

// snippetConfig is a configuration with a policy's snippets: a zone
// declared at http level and used in a location.
func snippetConfig(httpSnippet, locationSnippet string) []config.File {
	httpPath := snippetsDir + "snippetspolicy_default_p_http.conf"
	locPath := snippetsDir + "snippetspolicy_default_p_http.server.location.conf"
	main := `worker_rlimit_nofile 2112;
events {
    worker_connections 1024;
}
http {
    include "` + httpPath + `";
    server {
        listen 80;
        server_name "";
        location / {
            include "` + locPath + `";
            return 404;
        }
    }
}
`
	return []config.File{
		{Path: config.MainConfPath, Data: []byte(main)},
		{Path: httpPath, Data: []byte(httpSnippet)},
		{Path: locPath, Data: []byte(locationSnippet)},
	}
}

// TestSnippetFilesAreHeldToTheAllowList: a snippet file is read with
// package snippets' allow-list for the context it is included in, its
// zones under the names the renderer gives them, declared once and
// declared where used.
func TestSnippetFilesAreHeldToTheAllowList(t *testing.T) {
	const zone = "limit_conn_zone $binary_remote_addr zone=sn_snippetspolicy_default_p_addr:10m;\n"
	const use = "limit_conn sn_snippetspolicy_default_p_addr 1;\n"
	if err := Check(snippetConfig(zone, use+"limit_except GET { deny all; }\n")); err != nil {
		t.Fatalf("a configuration with snippets: %v", err)
	}
	cases := []struct {
		name, http, location, want string
	}{
		{"a directive off the allow-list", zone, use + "include /etc/passwd;\n", `directive "include" is not allowed in snippets`},
		{"a setting at http level", zone + "deny all;\n", use, `directive "deny" cannot stand in the http context`},
		{"a zone the renderer did not name", "limit_conn_zone $binary_remote_addr zone=addr:10m;\n", "limit_conn addr 1;\n", `zone "addr" is not a name Gatewall gives`},
		{"a zone no one declares", "", use, `zone "sn_snippetspolicy_default_p_addr" is not declared`},
		{"a zone declared twice", zone + strings.Replace(zone, "binary_remote_addr", "server_name", 1), use, "is declared twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(snippetConfig(c.http, c.location))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
