package snippets_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/snippets"
	"github.com/gatewall/gatewall/internal/syntax"
)

const (
	mainCtx  = v1alpha1.NginxContextMain
	httpCtx  = v1alpha1.NginxContextHTTP
	server   = v1alpha1.NginxContextHTTPServer
	location = v1alpha1.NginxContextHTTPServerLocation
)

func sn(ctx v1alpha1.NginxContext, value string) v1alpha1.Snippet {
	return v1alpha1.Snippet{Context: ctx, Value: value}
}

// NGF's snippets example (examples/snippets): its SnippetsFilter and
// SnippetsPolicy, as they are.
var (
	ngfLimitExcept = []v1alpha1.Snippet{sn(location, "limit_except GET {\n  deny all;\n}\n")}
	ngfLimitConn   = []v1alpha1.Snippet{
		sn(httpCtx, "limit_conn_zone $binary_remote_addr zone=addr:10m;"),
		sn(location, "limit_conn addr 1;"),
	}
)

func TestNGFExamplesAreAccepted(t *testing.T) {
	f, err := snippets.Check(snippets.RuleScope, ngfLimitExcept)
	if err != nil {
		t.Fatalf("limit-except-sf: %v", err)
	}
	if got := syntax.Format(f.Render(location, nil)); got != "limit_except GET {\n    deny all;\n}\n" {
		t.Errorf("limit-except-sf renders %q", got)
	}
	p, err := snippets.Check(snippets.GatewayScope, ngfLimitConn)
	if err != nil {
		t.Fatalf("limit-conn-sp: %v", err)
	}
	rename := func(z string) string { return "sn_policy_" + z }
	if got := syntax.Format(p.Render(httpCtx, rename)); got != "limit_conn_zone $binary_remote_addr zone=sn_policy_addr:10m;\n" {
		t.Errorf("limit-conn-sp's http snippet renders %q", got)
	}
	if got := syntax.Format(p.Render(location, rename)); got != "limit_conn sn_policy_addr 1;\n" {
		t.Errorf("limit-conn-sp's location snippet renders %q", got)
	}
	if want := []snippets.Zone{{Name: "addr", Bytes: 10 << 20}}; !reflect.DeepEqual(p.Zones, want) {
		t.Errorf("zones %v, want %v", p.Zones, want)
	}
	// The filter's http snippet may declare its own zone too.
	if _, err := snippets.Check(snippets.RuleScope, ngfLimitConn); err != nil {
		t.Errorf("limit-conn as a SnippetsFilter: %v", err)
	}
}

func TestAccepted(t *testing.T) {
	cases := []struct {
		name     string
		scope    snippets.Scope
		snippets []v1alpha1.Snippet
	}{
		{"comments only, in every context", snippets.GatewayScope, []v1alpha1.Snippet{sn(mainCtx, "# x"), sn(httpCtx, "# x"), sn(server, "# x"), sn(location, "# x")}},
		{"allow and deny", snippets.GatewayScope, []v1alpha1.Snippet{sn(server, "allow 10.0.0.0/8;\nallow 2001:db8::/32;\nallow 192.0.2.1;\ndeny all;")}},
		{"every setting in a location", snippets.RuleScope, []v1alpha1.Snippet{
			sn(httpCtx, "limit_conn_zone $remote_addr zone=perip:32k;\nlimit_conn_zone $server_name zone=perserver:64m;"),
			sn(location, `limit_conn perip 10;
limit_conn perserver 65535;
limit_conn_status 429;
limit_conn_log_level warn;
limit_conn_dry_run on;
limit_rate 100k;
limit_rate_after 1m;
gzip on;
gzip_comp_level 9;
gzip_min_length 1k;
gzip_types text/css application/json;
gzip_vary on;
gzip_proxied expired no-cache any;
gzip_http_version 1.1;
access_log off;
limit_except GET POST { allow 10.0.0.0/8; deny all; }`)}},
		{"the same single directive in two contexts", snippets.GatewayScope, []v1alpha1.Snippet{sn(server, "gzip on;"), sn(location, "gzip off;")}},
		{"limit_conn on two zones", snippets.GatewayScope, []v1alpha1.Snippet{
			sn(httpCtx, "limit_conn_zone $binary_remote_addr zone=a:1m; limit_conn_zone $server_name zone=b:1m;"), sn(server, "limit_conn a 1; limit_conn b 100;")}},
		{"gzip_types *", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "gzip_types *;")}},
		{"quoted values", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, `gzip "on"; limit_rate '10k';`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := snippets.Check(c.scope, c.snippets); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	cases := []struct {
		name     string
		scope    snippets.Scope
		snippets []v1alpha1.Snippet
		want     string
	}{
		// Reading and running what is not the data plane's.
		{"include", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "include /etc/passwd;")}, `spec.snippets[0] (http.server.location): line 1: directive "include" is not allowed in snippets: it reads a file`},
		{"load_module in main", snippets.GatewayScope, []v1alpha1.Snippet{sn(mainCtx, "load_module /tmp/evil.so;")}, `directive "load_module" cannot stand in a main snippet, which takes no directive`},
		{"lua", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "access_by_lua_file /tmp/evil.lua;")}, "Lua runs Gatewall's own code only"},
		{"a lua block", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "content_by_lua_block { ngx.say(1); }")}, "Lua runs Gatewall's own code only"},
		{"lua_shared_dict", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "lua_shared_dict d 1m;")}, "Lua runs Gatewall's own code only"},
		{"njs", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "js_import /tmp/x.js;")}, "njs runs Gatewall's own code only"},
		{"perl", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "perl Evil::handler;")}, "it runs code in NGINX"},
		{"alias", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "alias /var/run/secrets/;")}, "it serves the data plane's own files"},
		{"root", snippets.GatewayScope, []v1alpha1.Snippet{sn(server, "root /;")}, "it serves the data plane's own files"},
		{"ssl certificate from a path", snippets.GatewayScope, []v1alpha1.Snippet{sn(server, "ssl_certificate /etc/nginx/secrets/other.pem;")}, "TLS is the listeners'"},
		{"access_log to a file", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "access_log /etc/nginx/nginx.conf;")}, `directive "access_log" takes off, not "/etc/nginx/nginx.conf"`},
		{"error_log to a file", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "error_log /tmp/x debug;")}, "it writes a file"},
		{"a temp path", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "client_body_temp_path /etc/nginx;")}, "it writes files"},
		{"env", snippets.GatewayScope, []v1alpha1.Snippet{sn(mainCtx, "env AWS_SECRET_ACCESS_KEY;")}, "main snippet, which takes no directive"},
		{"user in main", snippets.GatewayScope, []v1alpha1.Snippet{sn(mainCtx, "user root;")}, "it changes the user NGINX runs as"},
		{"worker_processes in main", snippets.GatewayScope, []v1alpha1.Snippet{sn(mainCtx, "worker_processes 64;")}, "Gatewall sets it"},
		// Requests where the snippet says.
		{"proxy_pass (SSRF)", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "proxy_pass http://169.254.169.254/;")}, "proxying is the routes'"},
		{"resolver", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "resolver 10.0.0.10;")}, "DNS queries"},
		{"mirror", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "mirror /_gatewall|/x;")}, "copies of requests"},
		{"error_page to an internal location", snippets.GatewayScope, []v1alpha1.Snippet{sn(server, "error_page 404 = /_gatewall|/404;")}, "internal locations"},
		// What Gatewall's configuration relies on.
		{"set overwrites Gatewall's variable", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "set $gw_loop_out x;")}, "variables Gatewall's configuration relies on"},
		{"proxy_set_header", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "proxy_set_header X-Evil 1;")}, "drops every header Gatewall sets"},
		{"an API's setting", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "client_max_body_size 10g;")}, "use a ClientSettingsPolicy"},
		{"limit_req", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_req zone=x;")}, "use a RateLimitPolicy"},
		{"an unknown directive", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "frobnicate on;")}, `directive "frobnicate" is not on the allow-list`},
		{"a huge directive name is not echoed", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, strings.Repeat("x", 4000)+";")}, `... (4000 bytes) is not on the allow-list`},
		// Escaping the snippet's context.
		{"a brace that closes the location", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "deny all; }\nlocation / { return 200;")}, `line 1: unexpected "}"`},
		{"a directive smuggled in quotes", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, `deny "all; include /etc/passwd";`)}, `directive "deny" takes all, an IP address or a network (10.0.0.0/8), not "all; include /etc/passwd"`},
		{"a block directive that is not one", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "gzip on { include /etc/passwd; }")}, `directive "gzip" takes no block`},
		{"limit_except without a block", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_except GET;")}, "needs a block"},
		{"limit_except holding more than access rules", snippets.RuleScope, []v1alpha1.Snippet{sn(location, "limit_except GET { proxy_pass http://x; }")}, "proxying is the routes'"},
		{"limit_conn inside limit_except", snippets.RuleScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z:1m;"), sn(location, "limit_except GET { limit_conn z 1; }")},
			`directive "limit_conn" cannot stand in a limit_except block`},
		{"limit_except in a server", snippets.GatewayScope, []v1alpha1.Snippet{sn(server, "limit_except GET { deny all; }")}, `cannot stand in the http.server context (it may stand in http.server.location)`},
		// Settings where they would reach others.
		{"a setting at http level", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "deny all;")}, "settings there would reach Gatewall's own servers (readiness, endpoints)"},
		{"a filter's server snippet", snippets.RuleScope, []v1alpha1.Snippet{sn(server, "deny all;")}, "would change every route served on the hostname, other teams' too"},
		{"a filter's http snippet setting", snippets.RuleScope, []v1alpha1.Snippet{sn(httpCtx, "gzip on;")}, "would change every route of the Gateway, other teams' too"},
		// Variables and values.
		{"a zone keyed by a header", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $http_x_user zone=z:1m;")}, "counts by $binary_remote_addr, $remote_addr, $server_name only"},
		{"a variable in a size", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_rate $arg_rate;")}, `takes a size (digits, then k or m) from 0 to 1024m, not "$arg_rate"`},
		{"a huge zone", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z:10g;")}, "from 32k to 64m"},
		{"a zone NGINX refuses", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z:8k;")}, "from 32k to 64m"},
		{"a huge rate", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_rate 99999999999m;")}, "from 0 to 1024m"},
		{"a huge number", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z:1m;"), sn(location, "limit_conn z 65536;")}, "takes a number from 1 to 65535"},
		{"a status NGINX refuses", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_conn_status 302;")}, "from 400 to 599"},
		{"a network with host bits", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "allow 10.0.0.1/8;")}, "write 10.0.0.0/8"},
		{"a hostname to allow", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "allow example.com;")}, "takes all, an IP address or a network"},
		{"an IPv6 zone", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "allow fe80::1%eth0;")}, "takes all, an IP address or a network"},
		{"unix:", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "deny unix:;")}, "takes all, an IP address or a network"},
		{"a method in lower case", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_except get { deny all; }")}, `not "get"`},
		{"text/html in gzip_types", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "gzip_types text/html;")}, "need not name text/html"},
		{"too many arguments", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "gzip on off;")}, `directive "gzip" takes 1 argument, not 2`},
		// Duplicates NGINX refuses, and zones.
		{"a single directive twice", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "gzip on;\ngzip off;")}, `line 2: directive "gzip" is repeated in the same block`},
		{"limit_conn on one zone twice", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z:1m;"), sn(location, "limit_conn z 1; limit_conn z 2;")},
			`directive "limit_conn z" is repeated`},
		{"a zone of no one", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "limit_conn addr 1;")}, `zone "addr" is not declared by the object's http snippet`},
		{"a zone declared twice", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z:1m; limit_conn_zone $server_name zone=z:1m;")}, "zone z is declared twice"},
		{"too many zones", snippets.GatewayScope, []v1alpha1.Snippet{sn(httpCtx, "limit_conn_zone $remote_addr zone=z0:32k;\n"+manyZones(8))}, "9 zones are declared, more than the 8"},
		{"too many directives", snippets.GatewayScope, []v1alpha1.Snippet{sn(location, strings.Repeat("deny all;\n", 65))}, "line 65: more than 64 directives"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := snippets.Check(c.scope, c.snippets)
			if err == nil {
				t.Fatalf("accepted: %v", got)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("refused with %q, want it to say %q", err, c.want)
			}
		})
	}
}

// manyZones declares n zones z1..zn.
func manyZones(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("limit_conn_zone $remote_addr zone=z" + strings.Repeat("x", i) + ":32k;\n")
	}
	return b.String()
}

// TestCommentsEndAtLineFeeds: a comment ends at LF only, as NGINX's do,
// so what follows a CR is comment too: not read, not written.
func TestCommentsEndAtLineFeeds(t *testing.T) {
	c, err := snippets.Check(snippets.GatewayScope, []v1alpha1.Snippet{sn(location, "deny all;#\rinclude /etc/passwd;\nallow 10.0.0.0/8;")})
	if err != nil {
		t.Fatal(err)
	}
	if got := syntax.Format(c.Render(location, nil)); got != "deny all;\nallow 10.0.0.0/8;\n" {
		t.Errorf("renders %q", got)
	}
}

func TestSingles(t *testing.T) {
	c, err := snippets.Check(snippets.GatewayScope, []v1alpha1.Snippet{
		sn(httpCtx, "limit_conn_zone $remote_addr zone=a:1m;"),
		sn(location, "deny all; limit_conn a 1; gzip on; limit_except GET { deny all; }"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Singles(location), []string{"gzip", "limit_except"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Singles = %v, want %v", got, want)
	}
	if got := c.Singles(server); got != nil {
		t.Errorf("Singles(server) = %v", got)
	}
}
