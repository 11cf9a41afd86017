package config_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/nginxtest"
)

const testController = "gatewall.test/controller"

var testGateway = types.NamespacedName{Namespace: "ns", Name: "gw"}

// httpInput is a Gateway with one HTTP listener on port 80, a Service "app"
// with one endpoint, and objs (routes).
func httpInput(objs ...any) *graph.Input {
	in := graph.NewInput(testController)
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

var appRef = []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
	Name: "app", Port: ptr.To[gatewayv1.PortNumber](80)}}}}

// httpRoute is a route of the test Gateway with the given rules (each passing to app unless it has backendRefs or a redirect).
func httpRoute(name string, hostnames []gatewayv1.Hostname, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	for i := range rules {
		if rules[i].BackendRefs == nil && !hasRedirect(rules[i]) {
			rules[i].BackendRefs = appRef
		}
	}
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       hostnames,
			Rules:           rules,
		},
	}
}

func hasRedirect(r gatewayv1.HTTPRouteRule) bool {
	for _, f := range r.Filters {
		if f.Type == gatewayv1.HTTPRouteFilterRequestRedirect {
			return true
		}
	}
	return false
}

func pathMatch(t gatewayv1.PathMatchType, v string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: &t, Value: &v}}
}

// build builds the test Gateway's graph and configuration; every route must be accepted.
func build(t *testing.T, in *graph.Input) *config.Config {
	t.Helper()
	g := graph.Build(in, testGateway)
	if g == nil || !g.Valid {
		t.Fatalf("the Gateway is not valid")
	}
	for _, r := range g.Routes {
		for _, p := range r.Parents {
			if !p.Attached() {
				t.Fatalf("route %s is not attached: %+v", r.Key, p.Conditions)
			}
		}
	}
	return config.Build(g, config.Includes{})
}

func nginxAccepts(t *testing.T, cfg *config.Config) {
	t.Helper()
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	out, err := nginxtest.Test(cfg.Files())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if ws := nginxtest.Warnings(out); len(ws) > 0 {
		t.Fatalf("NGINX warns:\n%s", strings.Join(ws, "\n"))
	}
}

// TestInternalLocationsCannotCollide: a route may match any path under
// Gatewall's old internal prefix, and no route's path can be that of an
// internal location, so NGINX never sees a duplicate location.
func TestInternalLocationsCannotCollide(t *testing.T) {
	host := []gatewayv1.Hostname{"shared.example.com"}
	headers := pathMatch(gatewayv1.PathMatchPathPrefix, "/a")
	headers.Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-A", Value: "1"}}
	mirror := gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
		BackendRef: appRef[0].BackendObjectReference, Percent: ptr.To[int32](50)}}
	victim := httpRoute("victim", host,
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{headers}},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchExact, "/m")}, Filters: []gatewayv1.HTTPRouteFilter{mirror}})
	var attacks []gatewayv1.HTTPRouteRule
	for _, p := range []string{"/_gatewall/404", "/_gatewall", "/_gatewall/mirror/ns_app_80/5000"} {
		attacks = append(attacks,
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchExact, p)}},
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, p)}})
	}
	cfg := build(t, httpInput(victim, httpRoute("attacker", host, attacks...)))

	internal := 0
	for _, s := range cfg.Servers {
		for _, l := range s.Locations {
			if !l.Internal {
				continue
			}
			internal++
			if err := validation.MatchPath(l.Path); err == nil {
				t.Errorf("internal location %q is a path an Exact or PathPrefix match may have", l.Path)
			}
		}
	}
	if internal < 3 {
		t.Fatalf("want dispatch, 404 and mirror internal locations, got %d", internal)
	}
	nginxAccepts(t, cfg)
}

// TestMapKeywordHostnames: listener hostnames that are map keywords are
// escaped in the hostnames map of an HTTPS port, so NGINX reads them as keys
// (unescaped, "include" opens a file and "default" is a duplicate default).
func TestMapKeywordHostnames(t *testing.T) {
	for _, host := range []string{"include", "default", "hostnames", "volatile"} {
		t.Run(host, func(t *testing.T) {
			cfg := build(t, hostsInput(t, host))
			http := string(fileData(t, cfg, config.HTTPConfPath))
			if !strings.Contains(http, `\`+host+` "https";`) {
				t.Errorf("the hostnames map has no escaped %q key:\n%s", host, http)
			}
			nginxAccepts(t, cfg)
		})
	}
}

func fileData(t *testing.T, cfg *config.Config, path string) []byte {
	t.Helper()
	for _, f := range cfg.Files() {
		if f.Path == path {
			return f.Data
		}
	}
	t.Fatalf("no file %s", path)
	return nil
}

// TestAcceptedRegexesPassNginx: random regexes, built from RE2 and PCRE2
// syntax that the two read differently and from what NGINX's configuration
// syntax gives meaning to (quotes, ';', braces, '$', '#'), go through every
// place a user's regex reaches nginx.conf (path, header and query value,
// gRPC service and method); what the validation accepts, NGINX compiles.
func TestAcceptedRegexesPassNginx(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var objs []any
	accepted, refused := 0, 0
	for i := range 1500 {
		re := randomRegex(r, 0)
		name := fmt.Sprintf("r%d", i)
		exact := func(p string) gatewayv1.HTTPRouteMatch { return pathMatch(gatewayv1.PathMatchExact, p) }
		header, query := exact("/h"+name), exact("/q"+name)
		header.Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-A", Type: ptr.To(gatewayv1.HeaderMatchRegularExpression), Value: re}}
		query.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Name: "q", Type: ptr.To(gatewayv1.QueryParamMatchRegularExpression), Value: re}}
		var rules []gatewayv1.HTTPRouteRule
		if validation.RegexValue("", re) == nil {
			rules = append(rules, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{header}}, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{query}})
			objs = append(objs, grpcRegexRoute(name, re))
		}
		if validation.RegexPath("/"+re) == nil {
			rules = append(rules, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchRegularExpression, "/"+re)}})
		}
		if len(rules) == 0 {
			refused++
			continue
		}
		accepted++
		objs = append(objs, httpRoute(name, nil, rules...))
	}
	if accepted < 300 || refused < 300 {
		t.Fatalf("%d regexes accepted, %d refused: the sample does not test both sides", accepted, refused)
	}
	nginxAccepts(t, build(t, httpInput(objs...)))
}

// grpcRegexRoute matches re as both the gRPC service and method.
func grpcRegexRoute(name, re string) *gatewayv1.GRPCRoute {
	return &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(name + ".grpc.example.com")},
			Rules: []gatewayv1.GRPCRouteRule{{
				Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{
					Type: ptr.To(gatewayv1.GRPCMethodMatchRegularExpression), Service: &re, Method: &re}}},
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: appRef[0].BackendRef}},
			}},
		},
	}
}

// regexAtoms mix what RE2 and PCRE2 read alike with what they do not.
var regexAtoms = []string{"a", "b", "-", ".", "_", "/", `\.`, `\d`, `\w`, `\s`, `\S`, `\b`, `\B`, `\A`, `\z`, "^", "$",
	`\x41`, `\x7f`, `\xff`, `\0`, `\012`, `\12`, `\777`, `\pL`, `\v`, `\t`, `\Qa.b\E`, `\Qa`,
	"[a-z]", "[^/]", "[[:alpha:]]", `[\d-z]`, `[\d-]`, "[]a]", "[[.a.]]", `\{`, `\|`, `\?`, `\\`,
	// Carried in quotes: NGINX's configuration syntax, and braces.
	`"`, `\"`, "'", ";", " ", "#", "}", "{", "$x", "${x}", "[;{}\"]"}

var regexQuantifiers = []string{"", "", "", "*", "+", "?", "*?", "+?", "{2}", "{1,3}", "{2,}", "{0,2}?"}

func randomRegex(r *rand.Rand, depth int) string {
	var b strings.Builder
	for range 1 + r.IntN(4) {
		switch k := r.IntN(10); {
		case k < 7 || depth > 2:
			b.WriteString(regexAtoms[r.IntN(len(regexAtoms))])
		case k == 7:
			open := []string{"(", "(?:", "(?i:", "(?P<gw_host>", "(?<n>"}[r.IntN(5)]
			b.WriteString(open + randomRegex(r, depth+1) + ")")
		case k == 8:
			b.WriteString("(" + randomRegex(r, depth+1) + "|" + randomRegex(r, depth+1) + ")")
		default:
			b.WriteString("(?i)")
		}
		b.WriteString(regexQuantifiers[r.IntN(len(regexQuantifiers))])
	}
	if _, err := regexp.Compile(b.String()); err != nil {
		return randomRegex(r, depth)
	}
	return b.String()
}
