package config_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/datafile"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// appUpstream is the name of the upstream of app's port 80.
var appService = types.NamespacedName{Namespace: "ns", Name: "app"}

var appUpstream = config.UpstreamName(appService, 80)

// withEndpoints replaces the Service app's endpoints with eps (none: an
// EndpointSlice without endpoints).
func withEndpoints(in *graph.Input, eps ...discoveryv1.Endpoint) *graph.Input {
	for k, s := range in.EndpointSlices {
		if s.Labels[discoveryv1.LabelServiceName] == "app" {
			delete(in.EndpointSlices, k)
		}
	}
	in.Add(&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-1", Labels: map[string]string{discoveryv1.LabelServiceName: "app"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
		Endpoints:  eps,
	})
	return in
}

func endpoint(addr string, ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{
		Ready: ptr.To(ready), Serving: ptr.To(true), Terminating: ptr.To(!ready)}}
}

// TestConfigurationDoesNotFollowEndpoints: what only moves a Service's
// endpoints (a rollout, scaling to zero and back, a pod draining) changes
// the endpoints the data plane receives and not one byte of its files, so
// NGINX is not reloaded; a weighted split and a mirror to the Service
// included.
func TestConfigurationDoesNotFollowEndpoints(t *testing.T) {
	mirror := gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
		BackendRef: appRef[0].BackendObjectReference}}
	missing := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: "missing", Port: ptr.To[gatewayv1.PortNumber](80)}}}
	routes := []any{
		httpRoute("one", nil, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/one")},
			Filters: []gatewayv1.HTTPRouteFilter{mirror}}),
		httpRoute("split", nil, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/split")},
			BackendRefs: append([]gatewayv1.HTTPBackendRef{missing}, appRef...)}),
	}
	states := []struct {
		name string
		eps  []discoveryv1.Endpoint
		want []string
	}{
		{"two ready", []discoveryv1.Endpoint{endpoint("10.0.0.1", true), endpoint("10.0.0.2", true)}, []string{"10.0.0.1:8080", "10.0.0.2:8080"}},
		{"rolled", []discoveryv1.Endpoint{endpoint("10.0.0.1", false), endpoint("10.0.0.3", true)}, []string{"10.0.0.3:8080"}},
		{"draining only", []discoveryv1.Endpoint{endpoint("10.0.0.3", false)}, []string{"10.0.0.3:8080"}},
		{"scaled to zero", nil, []string{}},
		{"IPv6", []discoveryv1.Endpoint{endpoint("fd00::5", true)}, []string{"[fd00::5]:8080"}},
	}
	var first []config.File
	for _, st := range states {
		cfg := build(t, withEndpoints(httpInput(routes...), st.eps...))
		files := cfg.Files()
		if first == nil {
			first = files
			nginxAccepts(t, cfg)
		} else if datafile.Version(files) != datafile.Version(first) {
			t.Errorf("%s: the files changed with the endpoints", st.name)
		}
		for _, f := range files {
			if bytes.Contains(f.Data, []byte("10.0.0.")) || bytes.Contains(f.Data, []byte("fd00::")) {
				t.Errorf("%s: %s names an endpoint", st.name, f.Path)
			}
		}
		set := cfg.Endpoints()
		app := set[config.UpstreamID(appService, 80)]
		if app.Name != appUpstream || !slices.Equal(app.Endpoints, st.want) || app.Endpoints == nil {
			t.Errorf("%s: endpoints %+v, want %v (a list, also when empty)", st.name, app, st.want)
		}
		if err := endpoints.Snapshot(set, 1).Validate(); err != nil {
			t.Errorf("%s: the data plane would refuse the endpoints: %v", st.name, err)
		}
	}
}

// TestUnsentUpstreamKeepsItsFiles: an upstream the Gateway's endpoint
// budget has no room for (graph.Backend.Unsent) is not in the endpoints
// the data plane receives, and the files are the same: it answers 503
// through its fallback, and a reload is never needed for it.
func TestUnsentUpstreamKeepsItsFiles(t *testing.T) {
	in := withEndpoints(httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})), endpoint("10.0.0.1", true))
	sent := build(t, in)
	g := graph.Build(in, testGateway)
	g.Routes[0].Rules[0].Backends[0].Unsent = true
	unsent := config.Build(g, config.Includes{})
	if _, ok := unsent.Endpoints()[config.UpstreamID(appService, 80)]; ok || len(sent.Endpoints()) != 1 {
		t.Errorf("endpoints %v, then unsent %v: want the upstream, then not", sent.Endpoints(), unsent.Endpoints())
	}
	if datafile.Version(sent.Files()) != datafile.Version(unsent.Files()) {
		t.Error("the files follow the endpoint budget")
	}
}

// TestDynamicUpstreams: each upstream declares only its fallback (the 503
// sink, over HTTP/2 for gRPC), asks the balancer for endpoints with its ID
// and method, and keeps its keep-alive pool; gRPC and HTTP/1.1 to the same
// Service port have pools of their own.
func TestDynamicUpstreams(t *testing.T) {
	grpcRoute := &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"grpc.example.com"},
			Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: appRef[0].BackendRef}}}},
		},
	}
	cfg := build(t, httpInput(httpRoute("r", []gatewayv1.Hostname{"http.example.com"}, gatewayv1.HTTPRouteRule{}), grpcRoute))
	nginxAccepts(t, cfg)
	ups := string(fileData(t, cfg, config.UpstreamsConfPath))
	for name, up := range map[string]struct{ fallback, id string }{
		appUpstream:          {"sink-503.sock", config.UpstreamID(appService, 80)},
		appUpstream + "_h2c": {"sink-503-h2.sock", config.H2CUpstreamID(appService, 80)},
	} {
		block := regexp.MustCompile(`(?s)upstream ` + name + ` \{\n(.*?)\n\}`).FindStringSubmatch(ups)
		if block == nil {
			t.Fatalf("no upstream %s in\n%s", name, ups)
		}
		want := "    server unix:/var/run/nginx/" + up.fallback + " max_fails=0;\n" +
			`    balancer_by_lua_block { require("gatewall.balancer").balance("` + up.id + `", "round_robin") }` + "\n" +
			"    keepalive 16;"
		if block[1] != want {
			t.Errorf("upstream %s:\n%s\nwant\n%s", name, block[1], want)
		}
	}
	if set := cfg.Endpoints(); len(set) != 2 || !slices.Equal(set[config.H2CUpstreamID(appService, 80)].Endpoints, []string{"10.0.0.1:8080"}) {
		t.Errorf("endpoints %+v, want both upstreams with app's endpoint", set)
	}
}

// TestUseClusterIPIsDynamicToo: with useClusterIP, the upstream's one
// endpoint is the Service's cluster IP while the Service has endpoints,
// none otherwise (503): the files stay the same either way.
func TestUseClusterIPIsDynamicToo(t *testing.T) {
	in := func(eps ...discoveryv1.Endpoint) *graph.Input {
		i := withEndpoints(httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})), eps...)
		i.Services[types.NamespacedName{Namespace: "ns", Name: "app"}].Spec.ClusterIP = "10.96.0.10"
		return i
	}
	settings := config.Includes{Upstreams: map[types.NamespacedName]*config.UpstreamSettings{{Namespace: "ns", Name: "app"}: {UseClusterIP: ptr.To(true)}}}
	render := func(i *graph.Input) *config.Config {
		return config.Build(graph.Build(i, testGateway), settings)
	}
	up, down := render(in(endpoint("10.0.0.1", true))), render(in())
	id := config.UpstreamID(appService, 80)
	if got := up.Endpoints()[id].Endpoints; !slices.Equal(got, []string{"10.96.0.10:80"}) {
		t.Errorf("with endpoints: %v, want the cluster IP", got)
	}
	if got := down.Endpoints()[id].Endpoints; len(got) != 0 {
		t.Errorf("without endpoints: %v, want none", got)
	}
	if datafile.Version(up.Files()) != datafile.Version(down.Files()) {
		t.Error("the files follow the endpoints")
	}
}

// TestLuaGetsNoUserText: the configuration's Lua is Gatewall's constant
// text with hex IDs and method words; a hash method's key, which a user
// writes, reaches the balancer through a variable.
func TestLuaGetsNoUserText(t *testing.T) {
	key := "$arg_user"
	settings := config.Includes{Upstreams: map[types.NamespacedName]*config.UpstreamSettings{
		{Namespace: "ns", Name: "app"}: {Method: []string{"hash", key, "consistent"}}}}
	cfg := config.Build(graph.Build(httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})), testGateway), settings)
	nginxAccepts(t, cfg)
	lua := regexp.MustCompile(`_by_lua_block \{ (.*) \}`)
	allowed := regexp.MustCompile(`^[a-z_.()"/, 0-9-]*$`)
	for _, f := range cfg.Files() {
		for _, m := range lua.FindAllStringSubmatch(string(f.Data), -1) {
			if strings.Contains(m[1], key) || !allowed.MatchString(m[1]) {
				t.Errorf("%s: Lua %q holds more than Gatewall's words", f.Path, m[1])
			}
		}
	}
	ups, http := string(fileData(t, cfg, config.UpstreamsConfPath)), string(fileData(t, cfg, config.HTTPConfPath))
	id := config.UpstreamID(appService, 80)
	if !strings.Contains(http, `map "" $gw_hash_`+id+" {\n    default "+key+";\n}") ||
		!strings.Contains(ups, `balance("`+id+`", "hash_consistent")`) {
		t.Errorf("the hash key does not reach the balancer as $gw_hash_%s:\n%s\n%s", id, http, ups)
	}
}

// TestManyHashKeysFitTheVariablesHash: the variables holding hash
// methods' keys ($gw_hash_<ID>, 40 characters) are the configuration's
// maps, and its variables hash is sized with them: a tenant's policies on
// a thousand Services make NGINX neither fail nor warn ("could not build
// optimal variables_hash" came from 300 of them).
func TestManyHashKeysFitTheVariablesHash(t *testing.T) {
	settings := config.Includes{Upstreams: map[types.NamespacedName]*config.UpstreamSettings{}}
	var objs []any
	for i := 0; i < 1000; i++ {
		svc := types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("h%d", i)}
		objs = append(objs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
			httpRoute(svc.Name, []gatewayv1.Hostname{gatewayv1.Hostname(svc.Name + ".example.com")}, gatewayv1.HTTPRouteRule{
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(svc.Name), Port: ptr.To[gatewayv1.PortNumber](80)}}}}}))
		settings.Upstreams[svc] = &config.UpstreamSettings{Method: []string{"hash", "$request_uri"}}
	}
	nginxAccepts(t, config.Build(graph.Build(httpInput(objs...), testGateway), settings))
}

// TestGatewaySettingsReachNginx: the NginxProxy's connect timeout, tries,
// failure avoidance and worker shutdown timeout are rendered; a route's
// shorter timeout shortens the connect timeout, a longer one does not
// lengthen it.
func TestGatewaySettingsReachNginx(t *testing.T) {
	short, long := gatewayv1.Duration("100ms"), gatewayv1.Duration("30s")
	in := httpInput(
		httpRoute("short", nil, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/short")},
			Timeouts: &gatewayv1.HTTPRouteTimeouts{Request: &short}}),
		httpRoute("long", nil, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/long")},
			Timeouts: &gatewayv1.HTTPRouteTimeouts{Request: &long}}))
	g := graph.Build(in, testGateway)
	connect, fail, shutdown := gatewayv1.Duration("400ms"), gatewayv1.Duration("30s"), gatewayv1.Duration("2m")
	g.NginxProxy.Upstreams = &v1alpha2.Upstreams{ConnectTimeout: &connect, MaxTries: ptr.To[int32](5), FailTimeout: &fail}
	g.NginxProxy.WorkerShutdownTimeout = &shutdown
	cfg := config.Build(g, config.Includes{})
	nginxAccepts(t, cfg)
	all := ""
	for _, f := range cfg.Files() {
		all += string(f.Data)
	}
	for _, want := range []string{
		"worker_shutdown_timeout 120s;", "proxy_connect_timeout 400ms;", "grpc_connect_timeout 400ms;",
		"proxy_next_upstream_tries 5;", `require("gatewall.balancer").configure(5, 30000)`,
		"proxy_connect_timeout 100ms;",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q", want)
		}
	}
	if strings.Contains(all, "proxy_connect_timeout 30000ms") {
		t.Error("a route's longer timeout lengthened the connect timeout")
	}
}

// TestRouteTimeouts: backendRequest bounds each try of a request (so that a
// try whose endpoint stops answering ends, and an idempotent request goes on
// to another endpoint), request bounds the tries together.
func TestRouteTimeouts(t *testing.T) {
	d := func(s string) *gatewayv1.Duration { return ptr.To(gatewayv1.Duration(s)) }
	cases := []struct {
		name     string
		timeouts gatewayv1.HTTPRouteTimeouts
		want     []string
		not      []string
	}{
		{"both", gatewayv1.HTTPRouteTimeouts{Request: d("10s"), BackendRequest: d("500ms")},
			[]string{"proxy_read_timeout 500ms;", "proxy_send_timeout 500ms;", "proxy_next_upstream_timeout 10000ms;"}, []string{"proxy_connect_timeout 500ms"}},
		{"request only", gatewayv1.HTTPRouteTimeouts{Request: d("2s")},
			[]string{"proxy_read_timeout 2000ms;", "proxy_next_upstream_timeout 2000ms;"}, nil},
		{"backendRequest only", gatewayv1.HTTPRouteTimeouts{BackendRequest: d("100ms")},
			[]string{"proxy_read_timeout 100ms;", "proxy_connect_timeout 100ms;"}, []string{"proxy_next_upstream_timeout"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			timeouts := c.timeouts
			cfg := build(t, httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{Timeouts: &timeouts})))
			servers := string(fileData(t, cfg, config.ServersConfPath))
			for _, w := range c.want {
				if !strings.Contains(servers, w) {
					t.Errorf("no %q in\n%s", w, servers)
				}
			}
			for _, n := range c.not {
				if strings.Contains(servers, n) {
					t.Errorf("%q in\n%s", n, servers)
				}
			}
		})
	}
}
