package balancer

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/valuecheck"
)

var (
	valuesCount = flag.Int("values.count", 32, "generated header values and regexes TestHeaderValuesReachBackends sends beside its fixed ones")
	valuesSeed  = flag.Uint64("values.seed", 1, "seed of TestHeaderValuesReachBackends' generated values")
)

// The rules of a value's route, in order.
const (
	ruleSet     = iota // X-V set on the request, X-R on the response
	ruleAdd            // X-A added to the request's, X-RA to the response's
	ruleCompose        // X-C set by the rule to "r", the backendRef adds the value
	ruleSplit          // X-P set by one backendRef, added by the other
	ruleMatch          // X-M matched exactly
	ruleRegex          // X-M matched by the value as a regular expression
)

var rulePaths = []string{"/set", "/add", "/compose", "/split", "/match", "/regex"}

// valueRoute is value v's route, on host v<i>.example.com.
func valueRoute(i int, v string) *gatewayv1.HTTPRoute {
	ref := func(svc string, f *gatewayv1.HTTPHeaderFilter) gatewayv1.HTTPBackendRef {
		b := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: ptr.To[int32](1), BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}
		if f != nil {
			b.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: f}}
		}
		return b
	}
	h := func(name string) []gatewayv1.HTTPHeader {
		return []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: v}}
	}
	filters := func(request, response gatewayv1.HTTPHeaderFilter) []gatewayv1.HTTPRouteFilter {
		return []gatewayv1.HTTPRouteFilter{
			{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &request},
			{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &response}}
	}
	rules := make([]gatewayv1.HTTPRouteRule, len(rulePaths))
	for j, p := range rulePaths {
		rules[j] = gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{ref("app", nil)},
			Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(p)}}}}
	}
	rules[ruleSet].Filters = filters(gatewayv1.HTTPHeaderFilter{Set: h("X-V")}, gatewayv1.HTTPHeaderFilter{Set: h("X-R")})
	rules[ruleAdd].Filters = filters(gatewayv1.HTTPHeaderFilter{Add: h("X-A")}, gatewayv1.HTTPHeaderFilter{Add: h("X-RA")})
	rules[ruleCompose].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
		RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-C", Value: "r"}}}}}
	rules[ruleCompose].BackendRefs = []gatewayv1.HTTPBackendRef{ref("app", &gatewayv1.HTTPHeaderFilter{Add: h("X-C")})}
	rules[ruleSplit].BackendRefs = []gatewayv1.HTTPBackendRef{ref("app", &gatewayv1.HTTPHeaderFilter{Set: h("X-P")}),
		ref("app2", &gatewayv1.HTTPHeaderFilter{Add: h("X-P")})}
	rules[ruleMatch].Matches[0].Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-M", Value: v}}
	rules[ruleRegex].Matches[0].Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-M", Type: ptr.To(gatewayv1.HeaderMatchRegularExpression), Value: v}}
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("v%d", i)}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
		Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("v%d.example.com", i))}, Rules: rules}}
}

var valuesGateway = types.NamespacedName{Namespace: "ns", Name: "gw"}

func valuesInput(values []string) *graph.Input {
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx",
		Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}})
	for _, svc := range []string{"app", "app2"} {
		in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: svc}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	}
	for i, v := range values {
		in.Add(valueRoute(i, v))
	}
	return in
}

// What the client sends with every request, for the variables that read it.
const (
	userAgent    = "valuecheck/1"
	referer      = "https://referer.example/a?b"
	forwardedFor = "192.0.2.7"
)

// variablePattern is a regex of what NGINX gives variable name for the
// request x answered (to host and path): every allow-listed variable needs
// one, so a variable added to the list is checked here too.
func variablePattern(t testing.TB, name, host, path string, x exchange) string {
	_, query, hasQuery := strings.Cut(path, "?")
	switch name {
	case "remote_addr":
		return `127\.0\.0\.1`
	case "remote_port":
		return regexp.QuoteMeta(x.clientPort)
	case "request_id":
		return `[0-9a-f]{32}`
	case "request_method":
		return "GET"
	case "request_uri":
		return regexp.QuoteMeta(path)
	case "scheme":
		return "http"
	case "host":
		return regexp.QuoteMeta(host)
	case "server_protocol":
		return `HTTP/1\.1`
	case "args":
		return regexp.QuoteMeta(query)
	case "is_args":
		if hasQuery {
			return `\?`
		}
		return ""
	case "https", "ssl_protocol", "ssl_cipher":
		return "" // plain HTTP
	case "msec":
		return `[0-9]+\.[0-9]{3}`
	case "time_iso8601":
		return `[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}`
	case "connection", "connection_requests":
		return `[0-9]+`
	case "http_user_agent":
		return regexp.QuoteMeta(userAgent)
	case "http_referer":
		return regexp.QuoteMeta(referer)
	case "http_x_forwarded_for":
		return regexp.QuoteMeta(forwardedFor)
	case "proxy_add_x_forwarded_for":
		return regexp.QuoteMeta(forwardedFor + ", 127.0.0.1")
	}
	t.Fatalf("header values may read $%s, which this test gives no value: add one", name)
	return ""
}

// TestHeaderValuesReachBackends sends requests through real NGINX to the
// routes of every value of the injection corpus (valuecheck: fixed attacks
// and values users write, then generated ones) that Gatewall carries: the
// backend receives each request header byte for byte as the user wrote it
// (allow-listed variables replaced by what NGINX knows of the request,
// every other '$' as it is), the client receives each response header
// likewise, an exact header match routes the value and nothing else, and
// a regular expression routes what Go's regexp matches (PCRE2 and RE2 read
// it alike). What validation refuses was checked by the render tests;
// here no rule that was refused is served.
func TestHeaderValuesReachBackends(t *testing.T) {
	r := rand.New(rand.NewPCG(*valuesSeed, 3))
	values := append(valuecheck.Values(r, *valuesCount), valuecheck.Regexes(r, *valuesCount)...)
	// One NGINX serves a batch: thousands of routes take it longer to
	// start than the harness waits.
	const perDataPlane = 128
	requests, carried := 0, 0
	for start := 0; start < len(values); start += perDataPlane {
		batch := values[start:min(start+perDataPlane, len(values))]
		t.Run(fmt.Sprintf("values %d-%d", start, start+len(batch)-1), func(t *testing.T) {
			n, c := checkBatch(t, batch)
			requests, carried = requests+n, carried+c
		})
	}
	t.Logf("%d values: %d rules carried them, %d requests", len(values), carried, requests)
}

// checkBatch serves the routes of values and checks each; it returns the
// requests it sent and the rules that carried a value.
func checkBatch(t *testing.T, values []string) (requests, carried int) {
	in := valuesInput(values)
	res := render.Render(in, metav1.Now())
	files := res.Files[valuesGateway]
	g := graph.Build(in, valuesGateway)
	if files == nil || g == nil {
		t.Fatal("the Gateway was not rendered")
	}
	d := startDataPlane(t, files)
	set := endpoints.Set{}
	for i, svc := range []string{"app", "app2"} {
		b := d.echoBackend(svc, fmt.Sprintf("127.0.0.%d", i+2), http.Header{"X-R": {"from the backend"}})
		key := types.NamespacedName{Namespace: "ns", Name: svc}
		set[config.UpstreamID(key, 80)] = endpoints.Upstream{Name: config.UpstreamName(key, 80), Endpoints: []string{b.addr}}
	}
	d.setEndpoints(set)
	c := d.newClient()
	valid := map[string][]bool{}
	for _, route := range g.Routes {
		for _, rule := range route.Rules {
			valid[route.Key.Name] = append(valid[route.Key.Name], rule.Valid)
		}
	}
	for i, v := range values {
		host := fmt.Sprintf("v%d.example.com", i)
		for j, ok := range valid[fmt.Sprintf("v%d", i)] {
			if !ok {
				if x := c.do("GET", host, rulePaths[j], nil); x.status != http.StatusNotFound {
					t.Errorf("value %q: rule %s was refused, but NGINX answers %s", v, rulePaths[j], x)
				}
				requests++
				continue
			}
			carried++
			requests += checkCarried(t, c, j, v, host)
		}
	}
	return requests, carried
}

// checkCarried sends the requests of rule j of value v's route and checks
// what the backend and the client received; it returns how many it sent.
func checkCarried(t *testing.T, c *client, j int, v, host string) int {
	t.Helper()
	send := func(path string, extra http.Header) exchange {
		h := http.Header{"User-Agent": {userAgent}, "Referer": {referer}, "X-Forwarded-For": {forwardedFor}}
		for k, vs := range extra {
			h[k] = vs
		}
		return c.do("GET", host, path, h)
	}
	// expect checks that header name of h (absent when NGINX made it
	// empty) is the value as the user wrote it, after prefix.
	expect := func(x exchange, path, side string, h http.Header, name, prefix string) {
		t.Helper()
		pattern := "^" + regexp.QuoteMeta(prefix) + valuecheck.Expand(v, regexp.QuoteMeta,
			func(n string) string { return "(?:" + variablePattern(t, n, host, path, x) + ")" }) + "$"
		got, ok := one(t, h, name) // absent: got is "", which the pattern must match
		if re := regexp.MustCompile(pattern); !re.MatchString(got) {
			t.Errorf("value %q: the %s received %s %q (sent: %v), want it to match %s", v, side, name, got, ok, pattern)
		}
	}
	switch j {
	case ruleSet, ruleAdd, ruleCompose, ruleSplit:
		path := rulePaths[j] + "/x?q=$1&r=%24"
		x := send(path, http.Header{"X-A": {"orig"}})
		if x.status != http.StatusOK {
			t.Errorf("value %q: GET %s%s: %s, want 200", v, host, path, x)
			return 1
		}
		switch j {
		case ruleSet:
			expect(x, path, "backend", x.echo.Header, "X-V", "")
			expect(x, path, "client", x.header, "X-R", "")
		case ruleAdd:
			expect(x, path, "backend", x.echo.Header, "X-A", "orig,")
			expect(x, path, "client", x.header, "X-RA", "")
		case ruleCompose:
			expect(x, path, "backend", x.echo.Header, "X-C", "r,")
		case ruleSplit:
			expect(x, path, "backend", x.echo.Header, "X-P", "")
		}
		return 1
	case ruleMatch:
		n := 0
		for _, m := range []struct {
			value string
			want  int
		}{{v, http.StatusOK}, {v + "x", http.StatusNotFound}, {"x" + v, http.StatusNotFound}} {
			n++
			if x := send("/match", http.Header{"X-M": {m.value}}); x.status != m.want {
				t.Errorf("value %q: X-M %q: %s, want %d", v, m.value, x, m.want)
			}
		}
		return n
	}
	re := regexp.MustCompile(v)
	samples := valuecheck.Samples(rand.New(rand.NewPCG(uint64(len(v)), 4)), v, 12)
	for _, s := range samples {
		want := http.StatusNotFound
		if re.MatchString(s) {
			want = http.StatusOK
		}
		if x := send("/regex", http.Header{"X-M": {s}}); x.status != want {
			t.Errorf("regex %q, X-M %q: %s, want %d (Go's regexp)", v, s, x, want)
		}
	}
	return len(samples)
}
