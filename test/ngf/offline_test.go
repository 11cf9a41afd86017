package ngf

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// rendered is one scenario rendered offline.
type rendered struct {
	scenario Scenario
	objs     []*unstructured.Unstructured
	res      render.Result
}

// renderScenario renders a scenario as the manager would on a cluster of
// the experimental channel (TCPRoute, UDPRoute and the ExternalAuth and
// CORS filters are there), with what a cluster adds: the GatewayClass
// "nginx" an installation creates, an EndpointSlice for each Service with
// a selector, and the Secrets cert-manager would issue.
func renderScenario(t *testing.T, s Scenario) rendered {
	t.Helper()
	same := func(ns string) string { return ns }
	objs, err := Objects(s.Name, same)
	if err != nil {
		t.Fatal(err)
	}
	issued, err := Issue(s.Name, same)
	if err != nil {
		t.Fatal(err)
	}
	added := []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": map[string]any{"name": "nginx"},
		"spec": map[string]any{"controllerName": graph.DefaultControllerName},
	}}}
	for _, sec := range issued.Secrets {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sec)
		if err != nil {
			t.Fatal(err)
		}
		added = append(added, &unstructured.Unstructured{Object: u})
	}
	for i, o := range objs {
		if o.GetKind() == "Service" {
			if slice := endpointSlice(o, i); slice != nil {
				added = append(added, slice)
			}
		}
	}
	var warnings bytes.Buffer
	in, err := render.Decode(append(added, objs...), graph.DefaultControllerName, "", &warnings)
	if err != nil || warnings.Len() > 0 {
		t.Fatalf("decoding: %v %s", err, warnings.String())
	}
	in.Snippets = s.Snippets
	serves, err := render.Serves(render.ChannelExperimental)
	if err != nil {
		t.Fatal(err)
	}
	return rendered{scenario: s, objs: objs, res: render.RenderFor(in, metav1.Now(), serves)}
}

// endpointSlice is the EndpointSlice a cluster would make for a Service
// with a selector: one ready endpoint per Service (10.250.0.i) on each
// port's target.
func endpointSlice(svc *unstructured.Unstructured, i int) *unstructured.Unstructured {
	if t, _, _ := unstructured.NestedString(svc.Object, "spec", "type"); t == "ExternalName" {
		return nil
	}
	if sel, _, _ := unstructured.NestedMap(svc.Object, "spec", "selector"); len(sel) == 0 {
		return nil
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var slicePorts []any
	for _, p := range ports {
		p := p.(map[string]any)
		target := p["targetPort"]
		if target == nil {
			target = p["port"]
		}
		protocol := p["protocol"]
		if protocol == nil {
			protocol = "TCP"
		}
		slicePorts = append(slicePorts, map[string]any{"name": p["name"], "port": target, "protocol": protocol})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata": map[string]any{"namespace": svc.GetNamespace(), "name": svc.GetName() + "-slice",
			"labels": map[string]any{"kubernetes.io/service-name": svc.GetName()}},
		"addressType": "IPv4", "ports": slicePorts,
		"endpoints": []any{map[string]any{"addresses": []any{fmt.Sprintf("10.250.0.%d", i+1)}, "conditions": map[string]any{"ready": true}}},
	}}
}

// TestScenariosOffline renders every scenario with the manager's pipeline:
// each Gateway is rendered (none held), its configuration passes real
// `nginx -t` without a warning, and every status says what the
// scenario's guide implies: everything accepted, resolved and not in
// conflict, Programmed waiting only for a data plane (offline, none
// applies it).
func TestScenariosOffline(t *testing.T) {
	var all []rendered
	for _, s := range Scenarios {
		all = append(all, renderScenario(t, s))
	}
	var configs [][]config.File
	var names []string
	for _, r := range all {
		t.Run(r.scenario.Name, func(t *testing.T) {
			for _, gw := range gatewaysOf(r.objs) {
				if why, held := r.res.Held[gw]; held {
					t.Errorf("Gateway %s is held: %s", gw, why)
				}
				files, ok := r.res.Files[gw]
				if !ok {
					t.Errorf("Gateway %s is not rendered", gw)
					continue
				}
				configs = append(configs, files)
				names = append(names, r.scenario.Name+" "+gw.String())
			}
			for _, problem := range statusProblems(r.objs, r.res.Statuses) {
				t.Error(problem)
			}
			text := configText(r.res)
			for _, want := range written[r.scenario.Name] {
				if !strings.Contains(text, want) {
					t.Errorf("the configuration does not hold %q", want)
				}
			}
		})
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if !res.OK {
			t.Errorf("%s: nginx -t rejected the configuration:\n%s", names[i], res.Output)
		} else if ws := nginxtest.Warnings(res.Output); len(ws) > 0 {
			t.Errorf("%s: nginx -t warned:\n%s", names[i], strings.Join(ws, "\n"))
		}
	}
}

// written are, per scenario, lines its configuration holds for the
// behaviour its guide describes (what the e2e test sees on the wire where
// it can: the offline test is the one for every scenario).
var written = map[string][]string{
	"advanced-routing":         {`"~variant-[a-z]{1}"`, `pick=(?:pick-[a-z]{1})`, `location ~ "/orders/[a-z]+"`},
	"basic-authentication":     {`auth_basic "Back office";`, "auth_basic_user_file /etc/nginx/secrets/htpasswd_default_staff-htpasswd;"},
	"client-settings-policy":   {"client_max_body_size 64;", "client_max_body_size 96;"},
	"cors-filter":              {"add_header Access-Control-Max-Age 600 always;"},
	"cross-namespace-routing":  {"proxy_pass http://svc_warehouse_orders_80;", "proxy_pass http://svc_warehouse_catalog_80;"},
	"external-authentication":  {"auth_request "},
	"externalname-service":     {`proxy_set_header Host "partner.example.org";`, `proxy_ssl_name "partner.example.org";`, "proxy_ssl_verify on;"},
	"grpc-exact-method":        {`location = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/Echo"`},
	"grpc-hostname":            {"server_name rpc.example.org;", "server_name beta.rpc.example.org;"},
	"grpc-headers":             {"map $http_x_variant "},
	"request-headers":          {`proxy_set_header X-Client-Addr "${remote_addr}";`},
	"response-headers":         {`add_header X-Request-Id "${request_id}" always;`, `add_header X-Seen-From "${remote_addr}" always;`},
	"https-termination":        {`ssl_ciphers "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:HIGH:!aNULL:!MD5";`, "ssl_prefer_server_ciphers on;"},
	"proxy-settings-policy":    {"proxy_buffers 8 32k;", "proxy_buffers 4 8k;"},
	"rate-limit-policy":        {"limit_req zone=rl_default_per-client_0;"},
	"secure-backend":           {"proxy_ssl_certificate /etc/nginx/secrets/cert_default_gateway-client-cert.pem;", "proxy_ssl_trusted_certificate "},
	"snippets":                 {"limit_except GET {", "limit_conn sn_snippetspolicy_default_one-per-client_clients 1;"},
	"tcp-routing":              {"listen 8001;", "listen 8002;"},
	"traffic-splitting":        {"75.00% svc_default_orders-v1_80;"},
	"traffic-splitting-equal":  {"50.00% svc_default_orders-v1_80;"},
	"udp-routing":              {"listen 5353 udp;"},
	"upstream-settings-policy": {"zone svc_default_catalog_80 512k;", "keepalive 24;"},
}

// configText is every file of every Gateway rendered, in one text.
func configText(res render.Result) string {
	var b strings.Builder
	for _, files := range res.Files {
		for _, f := range files {
			b.Write(f.Data)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestExternalNameResolved: the ExternalName backend reaches the data
// plane as a name its endpoints client resolves, with the NginxProxy's
// resolvers, never as an address in the configuration.
func TestExternalNameResolved(t *testing.T) {
	s, _ := Find("externalname-service")
	r := renderScenario(t, s)
	gw := types.NamespacedName{Namespace: "default", Name: "outbound"}
	res := r.res.Resolvers[gw]
	if got := strings.Join(res.Servers, ","); got != "192.0.2.53:53,resolver.example.net:53" || !res.IPv4Only {
		t.Errorf("resolvers: %+v", res)
	}
	var names []string
	for _, up := range r.res.Endpoints[gw] {
		names = append(names, up.Names...)
	}
	if strings.Join(names, ",") != "partner.example.org:443" {
		t.Errorf("names resolved by the data plane: %q", names)
	}
}

// gatewaysOf are the scenario's Gateways.
func gatewaysOf(objs []*unstructured.Unstructured) []types.NamespacedName {
	var out []types.NamespacedName
	for _, o := range objs {
		if o.GetKind() == "Gateway" {
			out = append(out, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()})
		}
	}
	return out
}

// negative are the condition types whose good value is False.
var negative = map[string]bool{"Conflicted": true, "PartiallyInvalid": true}

// statusProblems lists what in the statuses is not what a working scenario
// has: an object of a kind Gatewall reports on (Gateways, routes, policies,
// filters, NginxProxies) without a status, a condition not at its good
// value (Programmed False is good only as Pending: rendered offline).
func statusProblems(objs []*unstructured.Unstructured, statuses []client.Object) []string {
	var problems []string
	reported := map[string]bool{}
	for _, st := range statuses {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		id := objectID(st.GetObjectKind().GroupVersionKind().Kind, st.GetNamespace(), st.GetName())
		count := 0
		walkConditions(u["status"], "status", func(at string, c map[string]any) {
			count++
			typ, status, reason := fmt.Sprint(c["type"]), fmt.Sprint(c["status"]), fmt.Sprint(c["reason"])
			good := status == "True"
			switch {
			case negative[typ]:
				good = status == "False"
			case typ == "Programmed" && status == "False":
				good = reason == "Pending"
			}
			if !good {
				problems = append(problems, fmt.Sprintf("%s %s: %s is %s (%s): %v", id, at, typ, status, reason, c["message"]))
			}
		})
		if count > 0 {
			reported[id] = true
		}
	}
	for _, o := range objs {
		k := o.GetKind()
		if k != "Gateway" && k != "NginxProxy" && !strings.HasSuffix(k, "Route") && !strings.HasSuffix(k, "Policy") && !strings.HasSuffix(k, "Filter") {
			continue
		}
		if id := objectID(k, o.GetNamespace(), o.GetName()); !reported[id] {
			problems = append(problems, id+" has no status")
		}
	}
	sort.Strings(problems)
	return problems
}

func objectID(kind, ns, name string) string { return kind + " " + ns + "/" + name }

// walkConditions calls f with every condition below v (in any "conditions"
// list: a Gateway's, its listeners', route parents', policy ancestors',
// filter controllers'), and where it is.
func walkConditions(v any, at string, f func(at string, c map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if list, ok := v[k].([]any); ok && k == "conditions" {
				for _, c := range list {
					if c, ok := c.(map[string]any); ok {
						f(at, c)
					}
				}
				continue
			}
			walkConditions(v[k], at+"."+k, f)
		}
	case []any:
		for i, e := range v {
			walkConditions(e, fmt.Sprintf("%s[%d]", at, i), f)
		}
	}
}
