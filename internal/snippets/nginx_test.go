package snippets_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/snippets"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// accepted are snippets the allow-list accepts, together using every
// directive on it in every context it allows, with values at their bounds.
var accepted = [][]v1alpha1.Snippet{
	ngfLimitExcept,
	ngfLimitConn,
	{
		sn(httpCtx, "limit_conn_zone $remote_addr zone=small:32k;\nlimit_conn_zone $server_name zone=big:64m;"),
		sn(server, `limit_conn small 1;
limit_conn big 65535;
limit_conn_status 599;
limit_conn_log_level error;
limit_conn_dry_run off;
allow 192.0.2.0/24;
allow 2001:db8::1;
deny all;
limit_rate 1024m;
limit_rate_after 0;
gzip off;
gzip_comp_level 1;
gzip_min_length 1024m;
gzip_types *;
gzip_vary off;
gzip_proxied off;
gzip_http_version 1.0;
access_log off;`),
		sn(location, `limit_conn small 10;
limit_conn_status 400;
limit_conn_log_level info;
limit_conn_dry_run on;
allow ::/0;
deny 0.0.0.0/0;
limit_rate 1;
limit_rate_after 1m;
gzip on;
gzip_comp_level 9;
gzip_min_length 0;
gzip_types text/css application/json image/svg+xml;
gzip_vary on;
gzip_proxied expired no-cache no-store private no_last_modified no_etag auth any;
gzip_http_version 1.1;
access_log off;
limit_except GET HEAD POST PUT DELETE MKCOL COPY MOVE OPTIONS PROPFIND PROPPATCH LOCK UNLOCK PATCH {
    allow 10.0.0.0/8;
    deny all;
}`),
	},
}

// TestAcceptedPassNginx: what the allow-list accepts, rendered where
// Gatewall puts each context, passes real `nginx -t` without a warning;
// and the cases use every directive of the allow-list everywhere it may
// stand.
func TestAcceptedPassNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	used := map[string]map[string]bool{}
	var configs [][]config.File
	for i, ss := range accepted {
		c, err := snippets.Check(snippets.GatewayScope, ss)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		rename := func(z string) string { return fmt.Sprintf("sn_%d_%s", i, z) }
		text := func(ctx v1alpha1.NginxContext) string {
			ds := c.Render(ctx, rename)
			markUsed(used, string(ctx), ds)
			return syntax.Format(ds)
		}
		main := fmt.Sprintf(`pid /var/run/nginx/nginx.pid;
error_log stderr;
events {}
http {
    access_log /dev/stdout;
    client_body_temp_path /var/cache/nginx/client_body_temp;
    proxy_temp_path /var/cache/nginx/proxy_temp;
    fastcgi_temp_path /var/cache/nginx/fastcgi_temp;
    uwsgi_temp_path /var/cache/nginx/uwsgi_temp;
    scgi_temp_path /var/cache/nginx/scgi_temp;
%s
    server {
        listen 127.0.0.1:8080;
%s
        location / {
%s
            return 204;
        }
    }
}
`, text(httpCtx), text(server), text(location))
		configs = append(configs, []config.File{{Path: config.MainConfPath, Data: []byte(main), Mode: 0o644}})
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if !r.OK || len(nginxtest.Warnings(r.Output)) > 0 {
			t.Errorf("case %d: NGINX says: %s\n%s", i, r.Output, configs[i][0].Data)
		}
	}
	for name, places := range snippets.Allowed() {
		for _, p := range places {
			if !used[name][p] {
				t.Errorf("no accepted case has %s in %s", name, p)
			}
		}
	}
}

// markUsed records the directives rendered in a context, blocks' as in
// their block's place.
func markUsed(used map[string]map[string]bool, place string, ds []syntax.Directive) {
	for _, d := range ds {
		if used[d.Name] == nil {
			used[d.Name] = map[string]bool{}
		}
		used[d.Name][place] = true
		if d.Block != nil {
			markUsed(used, d.Name, d.Block)
		}
	}
}

// FuzzCheck: what Check accepts renders to text that reads back to the
// same directives and is accepted again; nothing rendered names a
// variable but a zone's key, or a file.
func FuzzCheck(f *testing.F) {
	for _, ss := range accepted {
		for _, s := range ss {
			f.Add(string(s.Context), s.Value)
		}
	}
	f.Add("http.server.location", "include /x; deny all;")
	f.Fuzz(func(t *testing.T, ctx, value string) {
		in := []v1alpha1.Snippet{sn(v1alpha1.NginxContext(ctx), value)}
		for _, scope := range []snippets.Scope{snippets.GatewayScope, snippets.RuleScope} {
			c, err := snippets.Check(scope, in)
			if err != nil {
				continue
			}
			out := syntax.Format(c.Render(v1alpha1.NginxContext(ctx), func(z string) string { return z }))
			again, err := snippets.Check(scope, []v1alpha1.Snippet{sn(v1alpha1.NginxContext(ctx), out)})
			if err != nil {
				t.Fatalf("%q is accepted, its rendering %q is not: %v", value, out, err)
			}
			if back := syntax.Format(again.Render(v1alpha1.NginxContext(ctx), func(z string) string { return z })); back != out {
				t.Fatalf("%q renders %q, which renders %q", value, out, back)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "$") && !strings.HasPrefix(line, "limit_conn_zone $") {
					t.Fatalf("%q renders a variable: %q", value, line)
				}
				if slices.ContainsFunc(strings.Fields(line), func(w string) bool { return strings.HasPrefix(w, "/") }) {
					t.Fatalf("%q renders a path: %q", value, line)
				}
			}
		}
	})
}
