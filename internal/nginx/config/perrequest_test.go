package config_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// TestLogPhaseLuaOnlyWhereRequestsAreCounted: the log phase's Lua, which
// ends the counts of requests in flight, runs only in a configuration
// with an upstream whose method keeps them (least_conn, random two): in
// any other it would run for every request and do nothing, a tenth of a
// worker's time on small requests (docs/benchmarks.md, issue 41).
func TestLogPhaseLuaOnlyWhereRequestsAreCounted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method []string
		want   bool
	}{
		{"round robin", nil, false},
		{"least_conn", []string{"least_conn"}, true},
		{"random two", []string{"random", "two"}, true},
		{"random two least_conn", []string{"random", "two", "least_conn"}, true},
		{"random", []string{"random"}, false},
		{"ip_hash", []string{"ip_hash"}, false},
		{"hash consistent", []string{"hash", "$request_uri", "consistent"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settings := config.Includes{Upstreams: map[types.NamespacedName]*config.UpstreamSettings{
				{Namespace: "ns", Name: "app"}: {Method: tc.method}}}
			cfg := config.Build(graph.Build(httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})), testGateway), settings)
			http := string(fileData(t, cfg, config.HTTPConfPath))
			if got := strings.Contains(http, `log_by_lua_block { require("gatewall.balancer").log() }`); got != tc.want {
				t.Errorf("log_by_lua in http.conf: %v, want %v:\n%s", got, tc.want, http)
			}
		})
	}
}

// TestLoopCheckWithoutHeaderMatchesNoRegex: a request without the loop
// header (nearly all) finds $gw_loop_in's value among the map's exact
// keys, which NGINX looks up before it tries a regular expression.
func TestLoopCheckWithoutHeaderMatchesNoRegex(t *testing.T) {
	cfg := build(t, httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})))
	http := string(fileData(t, cfg, config.HTTPConfPath))
	start := strings.Index(http, "map $http_x_gatewall_loop $gw_loop_in {\n")
	if start < 0 {
		t.Fatalf("no $gw_loop_in map:\n%s", http)
	}
	block := http[start : start+strings.Index(http[start:], "}")]
	if !strings.Contains(block, "\n    \"\" 0;\n") {
		t.Errorf("$gw_loop_in has no exact key for an absent header:\n%s", block)
	}
}
