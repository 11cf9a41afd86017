package graph

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const testController = "gatewall.test/controller"

// testInput is a Gateway ns/gw with an HTTP listener on port 80, a Service
// ns/app with one endpoint, and objs.
func testInput(objs ...any) *Input {
	in := NewInput(testController)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: testController}})
	in.Add(&gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "c", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}},
	})
	in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	in.Add(&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-1", Labels: map[string]string{discoveryv1.LabelServiceName: "app"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
	})
	for _, o := range objs {
		in.Add(o)
	}
	return in
}

func buildTest(t *testing.T, in *Input) *Gateway {
	t.Helper()
	g := Build(in, key("ns", "gw"))
	if g == nil {
		t.Fatal("no graph")
	}
	return g
}

var appBackend = gatewayv1.BackendObjectReference{Name: "app", Port: ptr.To[gatewayv1.PortNumber](80)}

func appRefs() []gatewayv1.HTTPBackendRef {
	return []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: appBackend}}}
}

func testHTTPRoute(name string, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules:           rules,
		},
	}
}

func prefixMatch(v string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: &v}}
}

func headerFilter(name, value string) gatewayv1.HTTPRouteFilter {
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: value}}}}
}

func redirectFilter(r gatewayv1.HTTPRequestRedirectFilter) gatewayv1.HTTPRouteFilter {
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &r}
}

func rewriteFilter(r gatewayv1.HTTPURLRewriteFilter) gatewayv1.HTTPRouteFilter {
	return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &r}
}

func prefixReplacement(v string) *gatewayv1.HTTPPathModifier {
	return &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: &v}
}

// TestHTTPRouteRuleChecks: the Gateway API's CEL rules on HTTPRoute rules
// (which a bypass of the API server skips), and port ranges, are checked:
// the rule is refused with the reason, the route's other rules stay.
func TestHTTPRouteRuleChecks(t *testing.T) {
	withMatches := func(r gatewayv1.HTTPRouteRule, ms ...gatewayv1.HTTPRouteMatch) gatewayv1.HTTPRouteRule {
		r.Matches = ms
		return r
	}
	corsMaxAge := func(maxAge int32) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://a.example.com"}, MaxAge: maxAge}}
	}
	cors := corsMaxAge(5) // the API server's default
	cases := []struct {
		name string
		rule gatewayv1.HTTPRouteRule
		want string // "" for a valid rule
	}{
		{"one filter of each type", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{headerFilter("X-A", "1"), cors}}, ""},
		{"repeated RequestHeaderModifier", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			headerFilter("Host", "a.example.com"), headerFilter("X-B", "2")}}, "filters[1]: RequestHeaderModifier filter cannot be repeated"},
		{"repeated ResponseHeaderModifier", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: []string{"A"}}},
			{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: []string{"B"}}}}},
			"ResponseHeaderModifier filter cannot be repeated"},
		{"repeated CORS", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{cors, cors}}, "CORS filter cannot be repeated"},
		// An API server without the schema's default stores it unset: 0.
		{"CORS maxAge 0 (unset)", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{corsMaxAge(0)}}, ""},
		{"negative CORS maxAge", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{corsMaxAge(-5)}}, "filters[0]: maxAge: -5 is less than 1"},
		{"repeated RequestRedirect", gatewayv1.HTTPRouteRule{Filters: []gatewayv1.HTTPRouteFilter{
			redirectFilter(gatewayv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https")}), redirectFilter(gatewayv1.HTTPRequestRedirectFilter{})}},
			"RequestRedirect filter cannot be repeated"},
		{"repeated URLRewrite", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			rewriteFilter(gatewayv1.HTTPURLRewriteFilter{}), rewriteFilter(gatewayv1.HTTPURLRewriteFilter{})}}, "URLRewrite filter cannot be repeated"},
		{"configuration of another type", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{{
			Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{},
			URLRewrite: &gatewayv1.HTTPURLRewriteFilter{}}}}, "filter.urlRewrite must be nil if the filter.type is not URLRewrite"},
		{"redirect with backendRefs", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			redirectFilter(gatewayv1.HTTPRequestRedirectFilter{Scheme: ptr.To("https")})}}, "RequestRedirect filter cannot be used together with backendRefs"},
		{"redirect and rewrite", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			redirectFilter(gatewayv1.HTTPRequestRedirectFilter{}), rewriteFilter(gatewayv1.HTTPURLRewriteFilter{Path: prefixReplacement("/b")})}},
			"RequestRedirect and URLRewrite cannot be used together"},
		{"replacePrefixMatch with one prefix match", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			rewriteFilter(gatewayv1.HTTPURLRewriteFilter{Path: prefixReplacement("/b")})}}, prefixMatch("/a")), ""},
		{"replacePrefixMatch with two prefix matches", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			rewriteFilter(gatewayv1.HTTPURLRewriteFilter{Path: prefixReplacement("/b")})}}, prefixMatch("/a"), prefixMatch("/c")),
			"replacePrefixMatch needs exactly one match"},
		{"redirect replacePrefixMatch with two prefix matches", withMatches(gatewayv1.HTTPRouteRule{Filters: []gatewayv1.HTTPRouteFilter{
			redirectFilter(gatewayv1.HTTPRequestRedirectFilter{Path: prefixReplacement("/b")})}}, prefixMatch("/a"), prefixMatch("/c")),
			"replacePrefixMatch needs exactly one match"},
		{"replaceFullPath with a prefix replacement", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{
			rewriteFilter(gatewayv1.HTTPURLRewriteFilter{Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier,
				ReplaceFullPath: ptr.To("/a"), ReplacePrefixMatch: ptr.To("/b")}})}}, "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set"},
		{"redirect port 0", gatewayv1.HTTPRouteRule{Filters: []gatewayv1.HTTPRouteFilter{
			redirectFilter(gatewayv1.HTTPRequestRedirectFilter{Port: ptr.To[gatewayv1.PortNumber](0)})}}, "redirect port 0 is not between 1 and 65535"},
		{"redirect port 70000", gatewayv1.HTTPRouteRule{Filters: []gatewayv1.HTTPRouteFilter{
			redirectFilter(gatewayv1.HTTPRequestRedirectFilter{Port: ptr.To[gatewayv1.PortNumber](70000)})}}, "redirect port 70000 is not between 1 and 65535"},
		{"backendRequest longer than request", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Timeouts: &gatewayv1.HTTPRouteTimeouts{
			Request: ptr.To[gatewayv1.Duration]("1s"), BackendRequest: ptr.To[gatewayv1.Duration]("2s")}}, "backendRequest cannot be longer than request"},
		{"backendRequest with no request timeout", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Timeouts: &gatewayv1.HTTPRouteTimeouts{
			Request: ptr.To[gatewayv1.Duration]("0s"), BackendRequest: ptr.To[gatewayv1.Duration]("2s")}}, ""},
		{"16 header matches", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, headerMatches(16)), ""},
		{"17 header matches", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, headerMatches(17)), "headers has 17 items, more than the 16"},
		{"17 query matches", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, queryMatches(17, "v")), "queryParams has 17 items, more than the 16"},
		{"query regex of 1025 characters", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, queryMatches(1, strings.Repeat("v", 1025))),
			"query parameter value is 1025 characters long, more than the 1024"},
		{"empty header value", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, gatewayv1.HTTPRouteMatch{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-A", Value: ""}}}), "header value must not be empty"},
		{"empty header to set", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{headerFilter("X-A", "")}},
			"header value must not be empty"},
		{"17 headers to remove", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{{
			Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: headerNames(17)}}}},
			"remove has 17 items, more than the 16"},
		{"65 CORS allowHeaders", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS,
			CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://a.example.com"}, AllowHeaders: httpHeaderNames(65)}}}},
			"allowHeaders has 65 items, more than the 64"},
		{"unknown header match type", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, gatewayv1.HTTPRouteMatch{
			Headers: []gatewayv1.HTTPHeaderMatch{{Type: ptr.To[gatewayv1.HeaderMatchType]("Prefix"), Name: "X-A", Value: "a"}}}),
			`header "X-A": match type "Prefix" is not supported; use Exact or RegularExpression`},
		{"unknown query parameter match type", withMatches(gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, gatewayv1.HTTPRouteMatch{
			QueryParams: []gatewayv1.HTTPQueryParamMatch{{Type: ptr.To[gatewayv1.QueryParamMatchType]("Glob"), Name: "q", Value: "a"}}}),
			`query parameter "q": match type "Glob" is not supported`},
		{"retry on a status NGINX cannot retry on", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Retry: &gatewayv1.HTTPRouteRetry{Codes: []gatewayv1.HTTPRouteRetryStatusCode{503, 501}}},
			"retry.codes: NGINX retries on 403, 404, 429, 500, 502, 503, 504 only, not 501"},
		{"retry attempts 0", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Retry: &gatewayv1.HTTPRouteRetry{Attempts: ptr.To(0)}}, "retry.attempts: 0 is less than 1"},
		{"retry attempts 11", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Retry: &gatewayv1.HTTPRouteRetry{Attempts: ptr.To(11)}}, "retry.attempts: 11 is more than 10"},
		{"retry backoff not a duration", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Retry: &gatewayv1.HTTPRouteRetry{Backoff: ptr.To(gatewayv1.Duration("soon"))}}, "retry.backoff: "},
		{"session persistence", gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), SessionPersistence: &gatewayv1.SessionPersistence{}},
			"sessionPersistence is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRuleBesideValid(t, c.rule, c.want) })
	}
}

// headerMatches is a match of n headers.
func headerMatches(n int) gatewayv1.HTTPRouteMatch {
	var m gatewayv1.HTTPRouteMatch
	for _, name := range headerNames(n) {
		m.Headers = append(m.Headers, gatewayv1.HTTPHeaderMatch{Name: gatewayv1.HTTPHeaderName(name), Value: "1"})
	}
	return m
}

// queryMatches is a match of n query parameters, each matching the regex value.
func queryMatches(n int, value string) gatewayv1.HTTPRouteMatch {
	var m gatewayv1.HTTPRouteMatch
	for _, name := range headerNames(n) {
		m.QueryParams = append(m.QueryParams, gatewayv1.HTTPQueryParamMatch{Name: gatewayv1.HTTPHeaderName(name),
			Type: ptr.To(gatewayv1.QueryParamMatchRegularExpression), Value: value})
	}
	return m
}

func headerNames(n int) []string {
	var out []string
	for i := range n {
		out = append(out, "X-"+strings.Repeat("a", i+1))
	}
	return out
}

func httpHeaderNames(n int) []gatewayv1.HTTPHeaderName {
	var out []gatewayv1.HTTPHeaderName
	for _, h := range headerNames(n) {
		out = append(out, gatewayv1.HTTPHeaderName(h))
	}
	return out
}

// checkRuleBesideValid builds a route with a valid rule and rule: the
// valid rule must be served, and rule be valid (want "") or refused with an
// error containing want.
func checkRuleBesideValid(t *testing.T, rule gatewayv1.HTTPRouteRule, want string) {
	t.Helper()
	ok := gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/ok")}, BackendRefs: appRefs()}
	r := buildTest(t, testInput(testHTTPRoute("r", ok, rule))).Routes[0]
	if !r.Parents[0].Attached() || !r.Rules[0].Valid {
		t.Fatalf("the route's valid rule is not served: %+v", r.Parents[0].Conditions)
	}
	checkRule(t, r.Rules[1], want)
}

// checkRule checks that a rule is valid (want "") or refused with an error containing want.
func checkRule(t *testing.T, rule *Rule, want string) {
	t.Helper()
	switch {
	case want == "" && !rule.Valid:
		t.Fatalf("refused: %s", rule.Err)
	case want != "" && rule.Valid:
		t.Fatalf("accepted, want %q", want)
	case want != "" && !strings.Contains(rule.Err, want):
		t.Fatalf("error %q does not contain %q", rule.Err, want)
	}
}

// TestGRPCRouteRuleChecks: the same for GRPCRoute rules.
func TestGRPCRouteRuleChecks(t *testing.T) {
	modifier := func(name string) gatewayv1.GRPCRouteFilter {
		return gatewayv1.GRPCRouteFilter{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: "1"}}}}
	}
	method := func(m gatewayv1.GRPCMethodMatch) []gatewayv1.GRPCRouteMatch {
		return []gatewayv1.GRPCRouteMatch{{Method: &m}}
	}
	cases := []struct {
		name string
		rule gatewayv1.GRPCRouteRule
		want string
	}{
		{"one modifier", gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{modifier("X-A")}}, ""},
		{"repeated RequestHeaderModifier", gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{modifier("Host"), modifier("X-B")}},
			"filters[1]: RequestHeaderModifier filter cannot be repeated"},
		{"configuration of another type", gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{{
			Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{},
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{}}}}, "filter.requestHeaderModifier must be nil if the filter.type is not RequestHeaderModifier"},
		{"method match without service or method", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Type: ptr.To(gatewayv1.GRPCMethodMatchExact)})}, "one or both of service and method must be set"},
		{"named group", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression), Service: ptr.To("(?P<uri>svc)")})}, "named groups are not allowed"},
		{"service and method of 1024 characters", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Service: ptr.To(strings.Repeat("s", 1024)), Method: ptr.To(strings.Repeat("m", 1024))})}, ""},
		{"service of 4100 characters", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Service: ptr.To(strings.Repeat("s", 4100)), Method: ptr.To("M")})}, "gRPC service is 4100 characters long, more than the 1024"},
		{"method of 4100 characters", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Method: ptr.To(strings.Repeat("m", 4100))})}, "gRPC method is 4100 characters long, more than the 1024"},
		{"regex service of 4100 characters", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression), Service: ptr.To(strings.Repeat("s", 4100))})},
			"gRPC service is 4100 characters long, more than the 1024"},
		{"regex method of 1025 characters", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression), Method: ptr.To(strings.Repeat("m", 1025))})},
			"gRPC method is 1025 characters long, more than the 1024"},
		{"17 header matches", gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{{Headers: grpcHeaderMatches(17)}}},
			"headers has 17 items, more than the 16"},
		// NGINX's table of gRPC headers has a fixed bucket size.
		{"header to set of 46 characters", gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{modifier("X-" + strings.Repeat("a", 44))}}, ""},
		{"header to set of 47 characters", gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{modifier("X-" + strings.Repeat("a", 45))}},
			"is 47 characters long: NGINX's fixed table of gRPC request headers takes names of at most 46 characters"},
		{"header to hide of 47 characters", gatewayv1.GRPCRouteRule{Filters: []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: []string{"X-" + strings.Repeat("a", 45)}}}}},
			"NGINX's fixed table of gRPC response headers takes names of at most 46 characters"},
		{"unknown method match type", gatewayv1.GRPCRouteRule{Matches: method(gatewayv1.GRPCMethodMatch{
			Type: ptr.To[gatewayv1.GRPCMethodMatchType]("Prefix"), Service: ptr.To("svc")})}, `method: match type "Prefix" is not supported`},
		{"unknown header match type", gatewayv1.GRPCRouteRule{Matches: []gatewayv1.GRPCRouteMatch{{Headers: []gatewayv1.GRPCHeaderMatch{
			{Type: ptr.To[gatewayv1.GRPCHeaderMatchType]("Prefix"), Name: "x-a", Value: "a"}}}}}, `header "x-a": match type "Prefix" is not supported`},
		{"session persistence", gatewayv1.GRPCRouteRule{SessionPersistence: &gatewayv1.SessionPersistence{}}, "sessionPersistence is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rule.BackendRefs = []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: appBackend}}}
			g := buildTest(t, testInput(&gatewayv1.GRPCRoute{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
				Spec: gatewayv1.GRPCRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
					Rules:           []gatewayv1.GRPCRouteRule{c.rule},
				},
			}))
			checkRule(t, g.Routes[0].Rules[0], c.want)
		})
	}
}

func grpcHeaderMatches(n int) []gatewayv1.GRPCHeaderMatch {
	var out []gatewayv1.GRPCHeaderMatch
	for _, name := range headerNames(n) {
		out = append(out, gatewayv1.GRPCHeaderMatch{Name: gatewayv1.GRPCHeaderName(name), Value: "1"})
	}
	return out
}

// TestTooManyMatches: a route may have fewer than 128 matches in all.
func TestTooManyMatches(t *testing.T) {
	for _, n := range []int{127, 128} {
		var rules []gatewayv1.HTTPRouteRule
		for i := 0; i < n; i += 64 {
			rule := gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}
			for j := i; j < min(n, i+64); j++ {
				rule.Matches = append(rule.Matches, prefixMatch("/m"+strings.Repeat("x", j)))
			}
			rules = append(rules, rule)
		}
		g := buildTest(t, testInput(testHTTPRoute("r", rules...)))
		attached := g.Routes[0].Parents[0].Attached()
		if attached != (n < maxRouteMatches) {
			t.Errorf("%d matches: attached=%v, conditions %+v", n, attached, g.Routes[0].Parents[0].Conditions)
		}
	}
}

// TestTooManyHostnames: a route may have 16 hostnames.
func TestTooManyHostnames(t *testing.T) {
	for _, n := range []int{16, 17} {
		r := testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})
		for i := range n {
			r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(strings.Repeat("h", i+1)+".example.com"))
		}
		p := buildTest(t, testInput(r)).Routes[0].Parents[0]
		msg := p.Conditions[0].Message
		if p.Attached() != (n <= 16) || (n > 16 && !strings.Contains(msg, "spec.hostnames has 17 items, more than the 16")) {
			t.Errorf("%d hostnames: attached=%v %q", n, p.Attached(), msg)
		}
	}
}

// TestMessagesAreDeterministic: when several values are invalid, the
// message names the same one every time.
func TestMessagesAreDeterministic(t *testing.T) {
	grpc := gatewayv1.GRPCRouteMatch{Method: &gatewayv1.GRPCMethodMatch{Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression),
		Service: ptr.To("(?P<a>x)"), Method: ptr.To("(?P<b>y)")}}
	star := &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"*", "https://a.example.com"},
		AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"*", "GET"}, AllowHeaders: []gatewayv1.HTTPHeaderName{"*", "X-A"}}
	for range 50 {
		if _, err := grpcMatch(grpc); err == nil || !strings.Contains(err.Error(), "gRPC service") {
			t.Fatalf("gRPC match: %v, want the service named first", err)
		}
		if _, err := cors(star); err == nil || !strings.HasPrefix(err.Error(), "allowOrigins:") {
			t.Fatalf("CORS: %v, want allowOrigins named first", err)
		}
	}
}

// TestParentRefsToTheSameParent: refs to one parent must each set a
// sectionName or port, and differ in them.
func TestParentRefsToTheSameParent(t *testing.T) {
	section := func(s string) *gatewayv1.SectionName { return ptr.To(gatewayv1.SectionName(s)) }
	cases := []struct {
		name string
		refs []gatewayv1.ParentReference
		want string
	}{
		{"one ref", []gatewayv1.ParentReference{{Name: "gw"}}, ""},
		{"distinct sections", []gatewayv1.ParentReference{{Name: "gw", SectionName: section("http")}, {Name: "gw", SectionName: section("other")}}, ""},
		{"section and port", []gatewayv1.ParentReference{{Name: "gw", SectionName: section("http")}, {Name: "gw", Port: ptr.To[gatewayv1.PortNumber](80)}}, ""},
		{"other parents", []gatewayv1.ParentReference{{Name: "gw"}, {Name: "gw2"}, {Name: "gw", Namespace: ptr.To[gatewayv1.Namespace]("ns2")}}, ""},
		{"no section", []gatewayv1.ParentReference{{Name: "gw"}, {Name: "gw", SectionName: section("http")}}, "sectionName or port must be specified"},
		{"same section", []gatewayv1.ParentReference{{Name: "gw", SectionName: section("http")}, {Name: "gw", SectionName: section("http")}}, "sectionName or port must be unique"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})
			r.Spec.ParentRefs = c.refs
			p := buildTest(t, testInput(r)).Routes[0].Parents[0]
			switch msg := p.Conditions[0].Message; {
			case c.want == "" && !p.Attached():
				t.Fatalf("not attached: %s", msg)
			case c.want != "" && (p.Attached() || !strings.Contains(msg, c.want)):
				t.Fatalf("attached=%v %q, want %q", p.Attached(), msg, c.want)
			}
		})
	}
}
