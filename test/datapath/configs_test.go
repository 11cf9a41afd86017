package datapath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/balancer"
)

// The two echo endpoints, on loopback addresses of each NGINX's network
// namespace (Gatewall refuses 127.0.0.1 as an endpoint).
var endpointAddrs = []string{"127.0.0.2:3000", "127.0.0.3:3000"}

// sampleFiles are the sample's objects that shape its Gateway's NGINX
// (config/samples): the NginxProxy, the GatewayClass, the Gateway and the
// HTTPRoute. The sample's policies are left out: its RateLimitPolicy
// allows 10 requests a second per client, which no throughput measure
// survives, and the others are tuning a hand-written NGINX has not.
var sampleFiles = []string{"gateway_v1alpha2_nginxproxy.yaml", "gatewayclass.yaml", "gateway.yaml", "httproute.yaml"}

// echoService is the sample's Service without its Deployment: the
// endpoints come from the harness, as the endpoints client hands them.
const echoService = `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  ports: [{name: http, port: 8080, targetPort: 3000}]
`

// echoUpstream is the ID of the echo Service's upstream.
var echoUpstream = config.UpstreamID(types.NamespacedName{Namespace: "default", Name: "echo"}, 8080)

// sampleManifests are the sample's objects with one NGINX worker, as the
// hand-written configuration has (workerProcesses, the NginxProxy's
// field; the sample leaves it to the pod's CPUs).
func sampleManifests() (string, error) {
	docs := []string{}
	for _, name := range sampleFiles {
		data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", name))
		if err != nil {
			return "", err
		}
		docs = append(docs, string(data))
	}
	docs = append(docs, echoService)
	text := strings.Join(docs, "\n---\n")
	const spec = "spec:\n  waf: disabled\n"
	if !strings.Contains(text, spec) {
		return "", fmt.Errorf("the sample's NginxProxy no longer starts with %q: set its workerProcesses here otherwise", spec)
	}
	return strings.Replace(text, spec, "spec:\n  workerProcesses: 1\n  waf: disabled\n", 1), nil
}

// gatewallFiles are Gatewall's files for the sample, rendered by the
// manager's pipeline.
func gatewallFiles() ([]config.File, error) {
	text, err := sampleManifests()
	if err != nil {
		return nil, err
	}
	return balancer.RenderManifests(text)
}

// handWritten is the configuration an operator would write for the same
// service: one worker, a static upstream of the two endpoints with
// keep-alive, and NGINX's defaults otherwise (its access log, combined,
// unbuffered, to a file, as Debian's nginx.conf has it).
func handWritten() []config.File {
	upstream := ""
	for _, a := range endpointAddrs {
		upstream += "        server " + a + ";\n"
	}
	return []config.File{{Path: config.MainConfPath, Mode: 0o644, Data: []byte(`worker_processes 1;
pid /var/run/nginx/nginx.pid;
error_log stderr notice;
events {
    worker_connections 1024;
}
http {
    access_log /var/log/nginx/access.log;
    client_body_temp_path /var/cache/nginx/client_body_temp;
    proxy_temp_path /var/cache/nginx/proxy_temp;
    upstream echo {
` + upstream + `        keepalive 32;
    }
    server {
        listen 80;
        server_name echo.example.com;
        location / {
            proxy_pass http://echo;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
`)}}
}

// variant is Gatewall's configuration with one factor changed, to
// measure what that factor costs. Variants are measurements, not
// proposals: some give up a guarantee (the loop cut, the access log).
type variant struct {
	name, what string
	edits      []edit
}

// edit replaces old by new in the file at path; an edit whose old text
// is missing fails the run, so that a change of rendering cannot make a
// variant measure nothing.
type edit struct{ path, old, new string }

var variants = []variant{
	{"as-before", "before issue 41's changes: log_by_lua, the loop map's regexes and the balancer's ngx.ctx for every request", append([]edit{
		{config.HTTPConfPath, "init_by_lua_block {", "log_by_lua_block { require(\"gatewall.balancer\").log() }\ninit_by_lua_block {"},
		{config.HTTPConfPath, "map $http_x_gatewall_loop $gw_loop_in {\n    \"\" 0;\n", "map $http_x_gatewall_loop $gw_loop_in {\n"},
	}, ctxAlways...)},
	{"ctx-always", "the balancer keeps every request's tries in ngx.ctx, as before issue 41", ctxAlways},
	{"no-access-log", "access_log off", []edit{{config.HTTPConfPath, "access_log /dev/stdout;", "access_log off;"}}},
	{"log-buffered", "access_log buffer=64k flush=1s", []edit{{config.HTTPConfPath, "access_log /dev/stdout;", "access_log /dev/stdout combined buffer=64k flush=1s;"}}},
	{"log-to-file", "access_log to a file, as the hand-written one", []edit{{config.HTTPConfPath, "access_log /dev/stdout;", "access_log /var/log/nginx/access.log;"}}},
	{"no-retry-var", "the balancer reads no $gw_retry_tries", []edit{{config.LuaDir + "gatewall/balancer.lua", "local retry_tries = tonumber(ngx.var.gw_retry_tries)", "local retry_tries = nil"}}},
	{"no-more-tries", "the balancer gives no request a second try", []edit{{config.LuaDir + "gatewall/balancer.lua", "ngx_balancer.set_more_tries(tries - 1)", "local _ = tries"}}},
	{"no-failure-marks", "the balancer reads no failure marks", []edit{{config.LuaDir + "gatewall/balancer.lua", "return state:get(peer.failed_key) ~= nil", "return false"}}},
	{"no-serial", "the balancer never checks that the endpoints changed", []edit{{config.LuaDir + "gatewall/balancer.lua", "local serial = endpoints.serial()", "local serial = cache_serial == -1 and endpoints.serial() or cache_serial"}}},
	{"lua-floor", "the balancer only sets the first endpoint from its per-worker cache (no failure marks, no retries)", []edit{{config.LuaDir + "gatewall/balancer.lua",
		"function M.balance(id, method)\n",
		"function M.balance(id, method)\n    do\n        local p = upstream(id).peers[1]\n        if p then ngx_balancer.set_current_peer(p.host, p.port) end\n        return\n    end\n"}}},
	{"lua-empty", "balancer_by_lua sets a constant endpoint (entering Lua and nothing more)", []edit{{config.UpstreamsConfPath,
		`require("gatewall.balancer").balance("` + echoUpstream + `", "round_robin")`,
		`require("ngx.balancer").set_current_peer("127.0.0.2", 3000)`}}},
	{"pcre-jit", "pcre_jit on", []edit{{config.MainConfPath, "worker_processes 1;", "worker_processes 1;\npcre_jit on;"}}},
	{"static-upstream", "static servers, no balancer_by_lua", []edit{{config.UpstreamsConfPath,
		"    server unix:/var/run/nginx/sink-503.sock max_fails=0;\n    balancer_by_lua_block { require(\"gatewall.balancer\").balance(\"" + echoUpstream + "\", \"round_robin\") }\n",
		"    server " + endpointAddrs[0] + ";\n    server " + endpointAddrs[1] + ";\n"}}},
	{"keepalive-32", "keepalive 32 to upstreams (16 rendered)", []edit{{config.UpstreamsConfPath, "keepalive 16;", "keepalive 32;"}}},
	{"few-headers", "only Host and Connection set for upstreams", []edit{
		{config.HTTPConfPath, "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n", ""},
		{config.HTTPConfPath, "proxy_set_header X-Real-IP $remote_addr;\n", ""},
		{config.HTTPConfPath, "proxy_set_header X-Forwarded-Proto $scheme;\n", ""},
		{config.HTTPConfPath, "proxy_set_header X-Forwarded-Host $host;\n", ""},
		{config.HTTPConfPath, "proxy_set_header X-Forwarded-Port $gw_server_port;\n", ""},
		{config.HTTPConfPath, "proxy_set_header Upgrade $http_upgrade;\n", ""},
	}},
	{"no-loop-cut", "no X-Gatewall-Loop header nor its check", []edit{
		{config.HTTPConfPath, "proxy_set_header X-Gatewall-Loop $gw_loop_out;\n", ""},
		{config.ServersConfPath, "    server_name echo.example.com;\n    if ($gw_loop_in) {\n        return 508;\n    }\n", "    server_name echo.example.com;\n"},
	}},
	{"error-log-notice", "error_log at notice (the sample's info)", []edit{{config.MainConfPath, "error_log stderr info;", "error_log stderr notice;"}}},
}

// ctxAlways are the edits giving every request of the balancer an
// ngx.ctx table, as it had before issue 41.
var ctxAlways = []edit{
	{config.LuaDir + "gatewall/balancer.lua", "if counted or ngx_balancer.get_last_failure() ~= nil then", "if true then"},
	{config.LuaDir + "gatewall/balancer.lua", "if try == nil and not counted then", "if try == nil and not counted and ngx_balancer.get_last_failure() ~= nil then"},
	{config.LuaDir + "gatewall/balancer.lua", "        if counted then\n            ngx.ctx.gatewall_try = try\n        end\n", "        ngx.ctx.gatewall_try = try\n"},
}

// apply returns files with v's edits.
func (v variant) apply(files []config.File) ([]config.File, error) {
	out := make([]config.File, len(files))
	copy(out, files)
	for _, e := range v.edits {
		found := false
		for i, f := range out {
			if f.Path != e.path {
				continue
			}
			if !strings.Contains(string(f.Data), e.old) {
				return nil, fmt.Errorf("variant %s: %s no longer holds %q", v.name, e.path, e.old)
			}
			out[i].Data = []byte(strings.Replace(string(f.Data), e.old, e.new, 1))
			found = true
		}
		if !found {
			return nil, fmt.Errorf("variant %s: no file %s", v.name, e.path)
		}
	}
	return out, nil
}
