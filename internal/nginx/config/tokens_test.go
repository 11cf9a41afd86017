package config_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/syntax"
)

// TestLongestValuesPassNginx: every kind of value at the longest the
// validation accepts (the Gateway API's limit, or NGINX's token limit once
// written) renders a configuration NGINX accepts.
func TestLongestValuesPassNginx(t *testing.T) {
	exact := func(p string) gatewayv1.HTTPRouteMatch { return pathMatch(gatewayv1.PathMatchExact, p) }
	header := exact("/header")
	header.Headers = []gatewayv1.HTTPHeaderMatch{{Name: gatewayv1.HTTPHeaderName("X-" + strings.Repeat("h", 254)), Value: strings.Repeat("v", syntax.MaxToken-3)}}
	headerRegex := exact("/header-regex")
	headerRegex.Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-A", Type: ptr.To(gatewayv1.HeaderMatchRegularExpression), Value: strings.Repeat("v", syntax.MaxToken-1)}}
	query := exact("/query")
	query.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Name: gatewayv1.HTTPHeaderName(strings.Repeat("q", 256)), Value: strings.Repeat("v", 1024)}}
	queryRegex := exact("/query-regex")
	queryRegex.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Name: "q", Type: ptr.To(gatewayv1.QueryParamMatchRegularExpression), Value: strings.Repeat(`\.`, 512)}}
	long := "/" + strings.Repeat("p", 1023)
	set := func(name, value string) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: value}}}}
	}
	refs := append(appRef[:0:0], appRef...)
	refs[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Add: []gatewayv1.HTTPHeader{{Name: "X-A", Value: strings.Repeat("b", 2000)}}}}}
	var exposed []gatewayv1.HTTPHeaderName
	for i := range 15 {
		exposed = append(exposed, gatewayv1.HTTPHeaderName(fmt.Sprintf("X-%s%02d", strings.Repeat("e", 250), i)))
	}
	rules := []gatewayv1.HTTPRouteRule{
		{Matches: []gatewayv1.HTTPRouteMatch{header, headerRegex, query, queryRegex}},
		{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, long)}},
		{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchRegularExpression, "/"+strings.Repeat(`\.`, 511)+"$")}},
		{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/"+strings.Repeat(".", 1023))}, Filters: []gatewayv1.HTTPRouteFilter{
			{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Path: &gatewayv1.HTTPPathModifier{
				Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To(long)}}}}},
		{Matches: []gatewayv1.HTTPRouteMatch{exact("/joined")}, Filters: []gatewayv1.HTTPRouteFilter{set("X-A", strings.Repeat("r", 2000))}, BackendRefs: refs},
		{Matches: []gatewayv1.HTTPRouteMatch{exact("/set")}, Filters: []gatewayv1.HTTPRouteFilter{set("X-"+strings.Repeat("s", 254), strings.Repeat("v", syntax.MaxToken-len(syntax.AppendedHeaderValue("X-"+strings.Repeat("s", 254), ""))))}},
		{Matches: []gatewayv1.HTTPRouteMatch{exact("/response")}, Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-A", Value: strings.Repeat("v", syntax.MaxToken)}}}}}},
		{Matches: []gatewayv1.HTTPRouteMatch{exact("/cors")}, Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS,
			CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://a.example.com"}, ExposeHeaders: exposed, AllowHeaders: exposed, MaxAge: 5}}}},
	}
	grpc := func(name string, m gatewayv1.GRPCMethodMatch) *gatewayv1.GRPCRoute {
		return &gatewayv1.GRPCRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: gatewayv1.GRPCRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Rules: []gatewayv1.GRPCRouteRule{{Matches: []gatewayv1.GRPCRouteMatch{{Method: &m}},
					BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: appRef[0].BackendRef}}}},
			},
		}
	}
	cfg := build(t, httpInput(httpRoute("long", nil, rules...),
		grpc("exact", gatewayv1.GRPCMethodMatch{Service: ptr.To(strings.Repeat("s", 1024)), Method: ptr.To(strings.Repeat("m", 1024))}),
		grpc("regex", gatewayv1.GRPCMethodMatch{Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression),
			Service: ptr.To(strings.Repeat(`\.`, 512)), Method: ptr.To(strings.Repeat(`\.`, 512))}),
	))
	nginxAccepts(t, cfg)
}

// TestManyConditionsOnOnePath: the routes of one server that match one
// path with conditions are dispatched by a chain of maps, each small enough
// for NGINX to read, tried in precedence order.
func TestManyConditionsOnOnePath(t *testing.T) {
	var objs []any
	const routes = 40
	for i := range routes {
		m := pathMatch(gatewayv1.PathMatchPathPrefix, "/")
		for j := range 16 {
			m.Headers = append(m.Headers, gatewayv1.HTTPHeaderMatch{Name: gatewayv1.HTTPHeaderName(fmt.Sprintf("X-%d", j)), Value: fmt.Sprint(i)})
		}
		r := httpRoute(fmt.Sprintf("r%02d", i), nil, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{m}})
		r.CreationTimestamp = metav1.Unix(int64(i), 0)
		objs = append(objs, r)
	}
	cfg := build(t, httpInput(objs...))
	var dispatch []string
	for _, m := range cfg.Maps {
		if strings.HasPrefix(m.Variable, "$gw_l_") {
			dispatch = append(dispatch, m.Variable)
			if n := syntax.QuotedLength(strings.Trim(m.Source, `"`)); n > syntax.MaxToken {
				t.Errorf("map %s: source of %d bytes", m.Variable, n)
			}
		}
	}
	// 640 conditions of 18 bytes: three maps.
	if len(dispatch) != 3 {
		t.Fatalf("want 3 dispatch maps, got %v", dispatch)
	}
	byVar := map[string]*config.Map{}
	fallback := map[string]bool{}
	for _, m := range cfg.Maps {
		byVar[m.Variable] = m
		fallback[m.Default] = true
	}
	var first *config.Map // the location's: no other map falls back to it
	for _, v := range dispatch {
		if !fallback[v] {
			first = byVar[v]
		}
	}
	if first == nil {
		t.Fatalf("no dispatch map comes first: %v", dispatch)
	}
	second := byVar[first.Default]
	if second == nil || byVar[second.Default] == nil {
		t.Fatalf("the maps do not fall back from one to the next: %s -> %s", first.Variable, first.Default)
	}
	third := byVar[second.Default]
	if third.Default != `"/_gatewall|/404"` {
		t.Errorf("the maps do not fall back in order: %s -> %s, %s -> %s, %s -> %s",
			first.Variable, first.Default, second.Variable, second.Default, third.Variable, third.Default)
	}
	entries := len(first.Entries) + len(second.Entries) + len(third.Entries)
	if entries != routes || first.Entries[0].Value != `"/_gatewall|/`+strings.TrimPrefix(first.Variable, "$gw_l_")+`/0"` {
		t.Errorf("want %d candidates, the oldest route's first: %d, %s", routes, entries, first.Entries[0].Value)
	}
	nginxAccepts(t, cfg)
}
