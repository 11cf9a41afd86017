package config_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/nginx/config"
)

// location returns the location of a server with the given modifier and path.
func location(t *testing.T, cfg *config.Config, server, modifier, path string) *config.Location {
	t.Helper()
	for _, s := range cfg.Servers {
		if s.Name != server {
			continue
		}
		for _, l := range s.Locations {
			if l.Modifier == modifier && l.Path == path {
				return l
			}
		}
	}
	t.Fatalf("no location %s %s in server %q", modifier, path, server)
	return nil
}

// setHeaders returns the value of each header a location's *_set_header
// directives set, by lower-case name, failing on a header set twice.
func setHeaders(t *testing.T, l *config.Location, directive string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range l.Directives {
		if d.Name != directive {
			continue
		}
		name := strings.ToLower(d.Args[0])
		if _, dup := out[name]; dup {
			t.Errorf("location %s: %s %s is set twice, NGINX would send both values", l.Path, directive, d.Args[0])
		}
		out[name] = d.Args[1]
	}
	return out
}

func requestHeaderFilter(m gatewayv1.HTTPHeaderFilter) gatewayv1.HTTPRouteFilter {
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &m}
}

// TestModifiedDefaultHeaders: a RequestHeaderModifier that sets, adds or
// removes a header Gatewall sets by default (Host, Connection, Upgrade,
// X-Forwarded-*, X-Real-IP; any case) replaces the default instead of
// sending both, and a removed header is not sent.
func TestModifiedDefaultHeaders(t *testing.T) {
	host := []gatewayv1.Hostname{"r.example.com"}
	modifier := requestHeaderFilter(gatewayv1.HTTPHeaderFilter{
		Set:    []gatewayv1.HTTPHeader{{Name: "host", Value: "other.example.com"}, {Name: "Connection", Value: "close"}},
		Add:    []gatewayv1.HTTPHeader{{Name: "X-Forwarded-For", Value: "1.2.3.4"}},
		Remove: []string{"x-real-ip", "Upgrade"},
	})
	rewrite := gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
		Hostname: ptr.To[gatewayv1.PreciseHostname]("rewritten.example.com")}}
	hostOnly := requestHeaderFilter(gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "HOST", Value: "set.example.com"}}})
	backendHost := requestHeaderFilter(gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "Host", Value: "b.example.com"}}})
	twoBackends := []gatewayv1.HTTPBackendRef{appRef[0], appRef[0]}
	twoBackends[0].Filters = []gatewayv1.HTTPRouteFilter{backendHost}
	route := httpRoute("r", host,
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchExact, "/a")}, Filters: []gatewayv1.HTTPRouteFilter{modifier}},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchExact, "/b")}, Filters: []gatewayv1.HTTPRouteFilter{rewrite, hostOnly}},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchExact, "/c")}, BackendRefs: twoBackends},
	)
	grpcModifier := gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
		Set: []gatewayv1.HTTPHeader{{Name: "Host", Value: "grpc.internal"}}}}
	grpc := &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"g.example.com"},
			Rules: []gatewayv1.GRPCRouteRule{{
				Filters:     []gatewayv1.GRPCRouteFilter{grpcModifier},
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: appRef[0].BackendRef}},
			}},
		},
	}
	cfg := build(t, httpInput(route, grpc))

	a := setHeaders(t, location(t, cfg, "r.example.com", "=", "/a"), "proxy_set_header")
	want := map[string]string{
		"host": `"other.example.com"`, "connection": `"close"`, "x-real-ip": `""`, "upgrade": `""`,
		"x-forwarded-proto": "$scheme", "x-forwarded-host": "$host", "x-forwarded-port": "$gw_server_port",
	}
	for name, v := range want {
		if a[name] != v {
			t.Errorf("/a: %s is %q, want %q", name, a[name], v)
		}
	}
	if !strings.HasPrefix(a["x-forwarded-for"], "$gw_add_") {
		t.Errorf("/a: X-Forwarded-For is %q, want the client's value with 1.2.3.4 added", a["x-forwarded-for"])
	}

	if b := setHeaders(t, location(t, cfg, "r.example.com", "=", "/b"), "proxy_set_header"); b["host"] != `"set.example.com"` {
		t.Errorf("/b: Host is %q, want the RequestHeaderModifier's value", b["host"])
	}

	c := setHeaders(t, location(t, cfg, "r.example.com", "=", "/c"), "proxy_set_header")
	if !strings.HasPrefix(c["host"], "$gw_bh_") || c["x-forwarded-for"] != "$proxy_add_x_forwarded_for" {
		t.Errorf("/c: Host is %q (want a per-backend variable), X-Forwarded-For %q (want the default)", c["host"], c["x-forwarded-for"])
	}
	for _, m := range cfg.Maps {
		if m.Variable == c["host"] {
			if got := m.Entries[1].Value; got != "$gw_host" {
				t.Errorf("/c: the backend that leaves Host alone gets %q, want Gatewall's default $gw_host", got)
			}
		}
	}

	if g := setHeaders(t, location(t, cfg, "g.example.com", "", "/"), "grpc_set_header"); g["host"] != `"grpc.internal"` {
		t.Errorf("GRPCRoute: Host is %q, want the RequestHeaderModifier's value", g["host"])
	}
	nginxAccepts(t, cfg)
}
