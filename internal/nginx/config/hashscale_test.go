package config_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// hostnameRoutes are routes serving n hostnames, 16 per route, one in four
// a wildcard.
func hostnameRoutes(n int) []any {
	var objs []any
	for r := 0; r*16 < n; r++ {
		var hosts []gatewayv1.Hostname
		for i := r * 16; i < min(n, (r+1)*16); i++ {
			h := fmt.Sprintf("host-%05d.example.com", i)
			if i%4 == 3 {
				h = fmt.Sprintf("*.wild-%05d.example.com", i)
			}
			hosts = append(hosts, gatewayv1.Hostname(h))
		}
		objs = append(objs, httpRoute(fmt.Sprintf("hosts-%04d", r), hosts, gatewayv1.HTTPRouteRule{}))
	}
	return objs
}

// conditionRoutes are n routes on one hostname, each matching its own
// header value: n condition maps and their variables, and a dispatch chain.
func conditionRoutes(n int) []any {
	var objs []any
	for i := range n {
		m := pathMatch(gatewayv1.PathMatchPathPrefix, fmt.Sprintf("/p%d", i%50))
		m.Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-Tenant", Value: fmt.Sprintf("tenant-%05d", i)}}
		r := httpRoute(fmt.Sprintf("cond-%05d", i), []gatewayv1.Hostname{"conditions.example.com"}, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{m}})
		r.CreationTimestamp = metav1.Unix(int64(i), 0)
		objs = append(objs, r)
	}
	return objs
}

// authHeaderRoutes are n routes, each asking the authorization service
// app and copying 64 headers of its answer: 64·n variables of the
// answers' headers (auth_request_set).
func authHeaderRoutes(n int) []any {
	var objs []any
	for r := range n {
		var names []string
		for i := range 64 {
			names = append(names, fmt.Sprintf("X-Authz-%04d-%02d", r, i))
		}
		objs = append(objs, httpRoute(fmt.Sprintf("authz-%04d", r), []gatewayv1.Hostname{"authz.example.com"}, gatewayv1.HTTPRouteRule{
			Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, fmt.Sprintf("/a%d", r))},
			Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExternalAuth, ExternalAuth: &gatewayv1.HTTPExternalAuthFilter{
				ExternalAuthProtocol: gatewayv1.HTTPRouteExternalAuthHTTPProtocol,
				BackendRef:           appRef[0].BackendObjectReference,
				HTTPAuthConfig:       &gatewayv1.HTTPAuthConfig{AllowedResponseHeaders: names},
			}}},
		}))
	}
	return objs
}

// headerRoutes change as many headers as a rule may, with names of 256
// characters, on a proxied route.
func headerRoutes() []any {
	names := func(prefix string) []gatewayv1.HTTPHeader {
		var hs []gatewayv1.HTTPHeader
		for i := range 16 {
			hs = append(hs, gatewayv1.HTTPHeader{Name: gatewayv1.HTTPHeaderName(fmt.Sprintf("X-%s%02d-%s", prefix, i, strings.Repeat("n", 250))), Value: "v"})
		}
		return hs
	}
	removed := func(prefix string) []string {
		var out []string
		for _, h := range names(prefix) {
			out = append(out, string(h.Name))
		}
		return out
	}
	request := &gatewayv1.HTTPHeaderFilter{Set: names("s"), Add: names("a"), Remove: removed("r")}
	response := &gatewayv1.HTTPHeaderFilter{Set: names("S"), Add: names("A"), Remove: removed("R")}
	return []any{httpRoute("headers", []gatewayv1.Hostname{"headers.example.com"}, gatewayv1.HTTPRouteRule{Filters: []gatewayv1.HTTPRouteFilter{
		{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: request},
		{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: response},
	}})}
}

// TestGRPCHeaderTablesAreNginxs: NGINX sizes its tables of gRPC header
// names itself. Random header changes on gRPC routes are either refused
// by the graph or rendered into a configuration NGINX accepts without a
// warning.
func TestGRPCHeaderTablesAreNginxs(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	// Mostly names that fit alone (at most 46 characters), one in fifty longer.
	name := func() gatewayv1.HTTPHeaderName {
		n := 1 + r.IntN(40)
		if r.IntN(50) == 0 {
			n = 45 + r.IntN(10)
		}
		return gatewayv1.HTTPHeaderName(fmt.Sprintf("X-%03d", r.IntN(1000)) + strings.Repeat(string(rune('a'+r.IntN(26))), n))
	}
	headers := func() []gatewayv1.HTTPHeader {
		var hs []gatewayv1.HTTPHeader
		seen := map[gatewayv1.HTTPHeaderName]bool{}
		for range r.IntN(17) {
			if n := name(); !seen[n] {
				seen[n] = true
				hs = append(hs, gatewayv1.HTTPHeader{Name: n, Value: "v"})
			}
		}
		return hs
	}
	in := httpInput()
	var routes []*gatewayv1.GRPCRoute
	for i := range 300 {
		g := &gatewayv1.GRPCRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("g%03d", i)},
			Spec: gatewayv1.GRPCRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("g%03d.example.com", i))},
				Rules: []gatewayv1.GRPCRouteRule{{
					Filters: []gatewayv1.GRPCRouteFilter{
						{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: headers()}},
						{Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: headers()}},
					},
					BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: appRef[0].BackendRef}},
				}},
			},
		}
		routes = append(routes, g)
		in.Add(g)
	}
	gw := graph.Build(in, testGateway)
	accepted := 0
	for _, rt := range gw.Routes {
		if rt.Parents[0].Attached() {
			accepted++
		}
	}
	if accepted < 50 || accepted > len(routes)-50 {
		t.Fatalf("%d of %d routes accepted: the sample does not test both sides", accepted, len(routes))
	}
	checkNoWarnings(t, "gRPC header changes", config.Build(gw, config.Includes{}).Files())
}

// TestHashesAtScale: whatever the number and length of server names, map
// keys, variables and header names, NGINX accepts the configuration and
// logs no warning ("could not build optimal ..."); without the sizes
// Gatewall writes for the tables that grow, it warns or fails, so the
// sizes are what makes it pass.
func TestHashesAtScale(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		objs []any
		// sizes are the directives without which NGINX complains; "" when
		// the defaults suffice.
		sizes string
	}{
		{"1 hostname", hostnameRoutes(1), ""},
		{"600 hostnames", hostnameRoutes(600), "server_names_hash_"},
		{"5,000 hostnames", hostnameRoutes(5000), "server_names_hash_"},
		{"2,000 condition maps", conditionRoutes(2000), "variables_hash_"},
		{"header names of 256 characters", headerRoutes(), "_headers_hash_"},
		{"2,048 authorization headers", authHeaderRoutes(32), "variables_hash_"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := build(t, httpInput(c.objs...))
			files := cfg.Files()
			checkNoWarnings(t, c.name, files)
			if c.sizes == "" {
				return
			}
			stripped, removed := withoutLines(files, c.sizes)
			out, err := nginxtest.Test(stripped)
			if !removed || (err == nil && len(nginxtest.Warnings(out)) == 0) {
				t.Errorf("without its %s* directives (removed: %v) NGINX neither fails nor warns: the case proves nothing", c.sizes, removed)
			}
		})
	}
}

// BenchmarkHashSizes measures the search behind the hash sizes on 5,000
// hostnames and 2,000 condition maps, through Files (which writes them).
func BenchmarkHashSizes(b *testing.B) {
	cfg := build(&testing.T{}, httpInput(append(hostnameRoutes(5000), conditionRoutes(2000)...)...))
	b.ResetTimer()
	for range b.N {
		_ = cfg.Files()
	}
}

// TestGRPCHeaderTableOverflow: an HTTPRoute passing to h2c backends whose
// backendRefs change many long headers is refused, because NGINX's fixed
// table of gRPC request headers cannot hold them: rendered anyway, NGINX
// warns.
func TestGRPCHeaderTableOverflow(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var refs []gatewayv1.HTTPBackendRef
	for range 8 {
		var set []gatewayv1.HTTPHeader
		for range 16 {
			name := []byte("X-")
			for range 40 {
				name = append(name, byte('a'+r.IntN(26)))
			}
			set = append(set, gatewayv1.HTTPHeader{Name: gatewayv1.HTTPHeaderName(name), Value: "v"})
		}
		ref := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: "h2c", Port: appRef[0].Port}}}
		ref.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: set}}}
		refs = append(refs, ref)
	}
	in := httpInput(append(h2cService(), httpRoute("many", nil, gatewayv1.HTTPRouteRule{BackendRefs: refs}))...)
	g := graph.Build(in, testGateway)
	rule := g.Routes[0].Rules[0]
	if rule.Valid || !strings.Contains(rule.Err, "NGINX cannot build its fixed-size table of gRPC request headers for these 137 header names") {
		t.Fatalf("rule valid %v: %s", rule.Valid, rule.Err)
	}
	// Served anyway, NGINX warns.
	rule.Valid = true
	p := g.Routes[0].Parents[0]
	p.Attachments = []graph.Attachment{{Listener: g.Listeners[0], Hostnames: []string{""}}}
	out, err := nginxtest.Test(config.Build(g, config.Includes{}).Files())
	if err != nil || !strings.Contains(strings.Join(nginxtest.Warnings(out), "\n"), "could not build optimal grpc_headers_hash") {
		t.Fatalf("NGINX does not warn about the refused rule: %v\n%s", err, out)
	}
}

// h2cService is a Service "h2c" speaking HTTP/2 without TLS, with one endpoint.
func h2cService() []any {
	return []any{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h2c"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, AppProtocol: ptr.To("kubernetes.io/h2c")}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h2c-1", Labels: map[string]string{discoveryv1.LabelServiceName: "h2c"}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), AppProtocol: ptr.To("kubernetes.io/h2c")}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.2"}}},
		},
	}
}
