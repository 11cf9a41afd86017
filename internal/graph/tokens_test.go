package graph

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/syntax"
)

// TestTokenLimits: values within their Gateway API limits that NGINX could
// not read once written (syntax.MaxToken) refuse their rule, with the
// reason; the route's other rules stay.
func TestTokenLimits(t *testing.T) {
	header := func(value string, regex bool) gatewayv1.HTTPRouteMatch {
		h := gatewayv1.HTTPHeaderMatch{Name: "X-A", Value: value}
		if regex {
			h.Type = ptr.To(gatewayv1.HeaderMatchRegularExpression)
		}
		return gatewayv1.HTTPRouteMatch{Headers: []gatewayv1.HTTPHeaderMatch{h}}
	}
	query := func(name, value string, regex bool) gatewayv1.HTTPRouteMatch {
		q := gatewayv1.HTTPQueryParamMatch{Name: gatewayv1.HTTPHeaderName(name), Value: value}
		if regex {
			q.Type = ptr.To(gatewayv1.QueryParamMatchRegularExpression)
		}
		return gatewayv1.HTTPRouteMatch{QueryParams: []gatewayv1.HTTPQueryParamMatch{q}}
	}
	matching := func(m gatewayv1.HTTPRouteMatch) gatewayv1.HTTPRouteRule {
		return gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{m}, BackendRefs: appRefs()}
	}
	// "~^" and "$" wrap an exact header value.
	longestExact := syntax.MaxToken - 3
	withBackendHeader := func(ruleValue, backendValue string) gatewayv1.HTTPRouteRule {
		refs := appRefs()
		refs[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Add: []gatewayv1.HTTPHeader{{Name: "X-A", Value: backendValue}}}}}
		return gatewayv1.HTTPRouteRule{BackendRefs: refs, Filters: []gatewayv1.HTTPRouteFilter{headerFilter("X-A", ruleValue)}}
	}
	response := func(value string) gatewayv1.HTTPRouteRule {
		return gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-A", Value: value}}}}}}
	}
	cors := func(n int) gatewayv1.HTTPRouteRule {
		var names []gatewayv1.HTTPHeaderName
		for i := range n {
			names = append(names, gatewayv1.HTTPHeaderName("X-"+strings.Repeat("h", 250)+string(rune('a'+i%26))+string(rune('a'+i/26))))
		}
		return gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS,
			CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://a.example.com"}, ExposeHeaders: names, MaxAge: 5}}}}
	}
	cases := []struct {
		name string
		rule gatewayv1.HTTPRouteRule
		want string
	}{
		{"longest exact header value", matching(header(strings.Repeat("v", longestExact), false)), ""},
		{"exact header value one longer", matching(header(strings.Repeat("v", longestExact+1), false)),
			"the match of header X-A takes 4094 bytes in NGINX's configuration, more than the 4093"},
		{"exact header value of 4096 characters", matching(header(strings.Repeat("v", 4096), false)), "takes 4099 bytes"},
		{"exact header value of escaped characters", matching(header(strings.Repeat(".", 1400), false)), "takes 4203 bytes"},
		{"regex header value of 4096 characters", matching(header(strings.Repeat("v", 4096), true)), "takes 4097 bytes"},
		{"regex header value of escapes", matching(header(strings.Repeat(`\.`, 1400), true)), "takes 4201 bytes"},
		{"longest regex header value", matching(header(strings.Repeat("v", syntax.MaxToken-1), true)), ""},
		{"exact query value of escaped characters", matching(query(strings.Repeat("*", 256), strings.Repeat(".", 1024), false)),
			"the match of query parameter"},
		{"regex query value of escapes", matching(query("q", strings.Repeat(`\.`, 512), true)), ""},
		{"longest rule and backend values", withBackendHeader(strings.Repeat("r", 2000), strings.Repeat("b", 2000)), ""},
		{"rule and backend values joined", withBackendHeader(strings.Repeat("r", 2100), strings.Repeat("b", 2000)),
			"the value of request header X-A takes 4111 bytes"},
		{"request header value of 4096 characters", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			headerFilter("X-A", strings.Repeat("v", 4096))}}, "the value of request header X-A takes 4106 bytes"},
		{"longest response header value", response(strings.Repeat("v", syntax.MaxToken)), ""},
		{"response header value of 4096 characters", response(strings.Repeat("v", 4096)), "the value of response header X-A takes 4096 bytes"},
		{"15 long exposed headers", cors(15), ""},
		{"16 long exposed headers", cors(16), "exposeHeaders listed in one header takes 4094 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRuleBesideValid(t, c.rule, c.want) })
	}
}

// TestGRPCHeaderTokenLimit: a gRPC header match is checked as an HTTP one.
func TestGRPCHeaderTokenLimit(t *testing.T) {
	_, err := grpcMatch(gatewayv1.GRPCRouteMatch{Headers: []gatewayv1.GRPCHeaderMatch{{Name: "X-A", Value: strings.Repeat("v", 4096)}}})
	if err == nil || !strings.Contains(err.Error(), "takes 4099 bytes") {
		t.Fatalf("got %v", err)
	}
}
