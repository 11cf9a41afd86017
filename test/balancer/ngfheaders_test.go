package balancer

import (
	"net/http"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// ngfScenarios are NGINX Gateway Fabric's header-filter and
// advanced-routing scenarios (its examples' objects, as its guides use
// them), and values the Gateway API's examples and users write.
const ngfScenarios = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway, namespace: ns}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: request-headers, namespace: ns}
spec:
  parentRefs: [{name: gateway, sectionName: http}]
  hostnames: [echo.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set:
        - {name: My-Overwrite-Header, value: this-is-the-only-value}
        - {name: X-Client-IP, value: $remote_addr}
        add:
        - {name: Accept-Encoding, value: compress}
        - {name: My-cool-header, value: this-is-an-appended-value}
        - {name: X-Request-Method, value: $request_method}
        remove: [User-Agent]
    backendRefs: [{name: headers, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: response-headers, namespace: ns}
spec:
  parentRefs: [{name: gateway, sectionName: http}]
  hostnames: [cafe.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: ResponseHeaderModifier
      responseHeaderModifier:
        set:
        - {name: X-Header-Set, value: overwritten-value}
        - {name: X-Real-IP, value: $remote_addr}
        add:
        - {name: X-Header-Add, value: this-is-the-appended-value}
        - {name: X-Request-ID, value: $request_id}
        remove: [X-Header-Remove]
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: X-Request-ID, value: "${request_id}"}]
    backendRefs: [{name: headers, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: literals, namespace: ns}
spec:
  parentRefs: [{name: gateway, sectionName: http}]
  hostnames: [literal.example.com]
  rules:
  - filters:
    - type: ResponseHeaderModifier
      responseHeaderModifier:
        set:
        - {name: Content-Disposition, value: 'attachment; filename="a b.txt"'}
        - {name: X-Literal, value: 'literal $foo stays'}
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set:
        - {name: X-Price, value: '5$ or ${price}, not $uri; {"a": "\"b\""} #c'}
        - {name: X-Client, value: '${remote_addr}:$remote_port $request_method $request_uri'}
    backendRefs: [{name: headers, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: coffee, namespace: ns}
spec:
  parentRefs: [{name: gateway}]
  hostnames: [cafe.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /coffee}}]
    backendRefs: [{name: coffee-v1-svc, port: 80}]
  - matches:
    - {path: {type: PathPrefix, value: /coffee}, headers: [{name: version, value: v2}]}
    - {path: {type: PathPrefix, value: /coffee}, queryParams: [{name: TEST, value: v2}]}
    backendRefs: [{name: coffee-v2-svc, port: 80}]
  - matches:
    - {path: {type: PathPrefix, value: /coffee}, headers: [{name: headerRegex, type: RegularExpression, value: "header-[a-z]{1}"}]}
    - {path: {type: PathPrefix, value: /coffee}, queryParams: [{name: queryRegex, type: RegularExpression, value: "query-[a-z]{1}"}]}
    backendRefs: [{name: coffee-v3-svc, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: tea, namespace: ns}
spec:
  parentRefs: [{name: gateway}]
  hostnames: [cafe.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /tea}, method: POST}]
    backendRefs: [{name: tea-post-svc, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /tea}, method: GET}]
    backendRefs: [{name: tea-svc, port: 80}]
`

// ngfServices are the Services of ngfScenarios.
var ngfServices = []string{"headers", "coffee-v1-svc", "coffee-v2-svc", "coffee-v3-svc", "tea-svc", "tea-post-svc"}

func ngfManifests() string {
	text := ngfScenarios
	for _, svc := range ngfServices {
		text += "---\napiVersion: v1\nkind: Service\nmetadata: {name: " + svc + ", namespace: ns}\nspec: {ports: [{name: http, port: 80}]}\n"
	}
	return text
}

// TestNGFHeaderScenarios serves NGF's header-filter and advanced-routing
// examples through real NGINX: request headers set from $remote_addr and
// $request_method reach the backend with the client's address and method,
// response headers come from $remote_addr and $request_id (the request's
// own, which the backend received too), a literal '$foo', quotes, ';' and
// braces arrive as written, and regular expressions with quantifiers
// route as NGF's guide describes.
func TestNGFHeaderScenarios(t *testing.T) {
	d := startDataPlane(t, renderManifests(t, ngfManifests()))
	set := endpoints.Set{}
	for i, svc := range ngfServices {
		b := d.echoBackend(svc, "127.0.0."+string(rune('2'+i)), http.Header{
			"X-Header-Unmodified": {"unmodified"}, "X-Header-Add": {"add-to"}, "X-Header-Set": {"overwrite"}, "X-Header-Remove": {"remove"}})
		key := types.NamespacedName{Namespace: "ns", Name: svc}
		set[config.UpstreamID(key, 80)] = endpoints.Upstream{Name: config.UpstreamName(key, 80), Endpoints: []string{b.addr}}
	}
	d.setEndpoints(set)
	c := d.newClient()

	t.Run("request headers", func(t *testing.T) {
		x := c.do("GET", "echo.example.com", "/headers", http.Header{"My-Cool-Header": {"my-client-value"},
			"My-Overwrite-Header": {"dont-see-this"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"curl/8"}})
		want := map[string]string{"My-Overwrite-Header": "this-is-the-only-value", "X-Client-Ip": "127.0.0.1",
			"Accept-Encoding": "gzip,compress", "My-Cool-Header": "my-client-value,this-is-an-appended-value", "X-Request-Method": "GET"}
		for name, v := range want {
			if got, _ := one(t, x.echo.Header, name); got != v {
				t.Errorf("the backend received %s: %q, want %q", name, got, v)
			}
		}
		if ua, ok := one(t, x.echo.Header, "User-Agent"); ok {
			t.Errorf("the backend received User-Agent %q, which the route removes", ua)
		}
	})

	t.Run("response headers", func(t *testing.T) {
		x := c.do("GET", "cafe.example.com", "/headers", nil)
		for name, v := range map[string]string{"X-Header-Unmodified": "unmodified", "X-Header-Set": "overwritten-value", "X-Real-Ip": "127.0.0.1"} {
			if got, _ := one(t, x.header, name); got != v {
				t.Errorf("the client received %s: %q, want %q", name, got, v)
			}
		}
		if got := x.header.Values("X-Header-Add"); len(got) != 2 || got[0] != "add-to" || got[1] != "this-is-the-appended-value" {
			t.Errorf("the client received X-Header-Add %q, want the backend's then the route's", got)
		}
		if got, ok := one(t, x.header, "X-Header-Remove"); ok {
			t.Errorf("the client received X-Header-Remove %q, which the route removes", got)
		}
		id, _ := one(t, x.header, "X-Request-Id")
		sent, _ := one(t, x.echo.Header, "X-Request-Id")
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) || id != sent {
			t.Errorf("X-Request-ID: the client received %q, the backend %q; want the request's one ID", id, sent)
		}
	})

	t.Run("literal values", func(t *testing.T) {
		x := c.do("GET", "literal.example.com", "/a?b=c", nil)
		for name, v := range map[string]string{"Content-Disposition": `attachment; filename="a b.txt"`, "X-Literal": "literal $foo stays"} {
			if got, _ := one(t, x.header, name); got != v {
				t.Errorf("the client received %s: %q, want %q", name, got, v)
			}
		}
		if got, _ := one(t, x.echo.Header, "X-Price"); got != `5$ or ${price}, not $uri; {"a": "\"b\""} #c` {
			t.Errorf("the backend received X-Price %q", got)
		}
		if got, _ := one(t, x.echo.Header, "X-Client"); got != "127.0.0.1:"+x.clientPort+" GET /a?b=c" {
			t.Errorf("the backend received X-Client %q, want 127.0.0.1:%s GET /a?b=c", got, x.clientPort)
		}
	})

	t.Run("advanced routing", func(t *testing.T) {
		for _, r := range []struct {
			method, path string
			header       http.Header
			want         string
		}{
			{"GET", "/coffee", nil, "coffee-v1-svc"},
			{"GET", "/coffee", http.Header{"Version": {"v2"}}, "coffee-v2-svc"},
			{"GET", "/coffee?TEST=v2", nil, "coffee-v2-svc"},
			{"GET", "/coffee", http.Header{"Headerregex": {"header-a"}}, "coffee-v3-svc"},
			{"GET", "/coffee?queryRegex=query-a", nil, "coffee-v3-svc"},
			// Not matched: no letter after the dash.
			{"GET", "/coffee", http.Header{"Headerregex": {"header-1"}}, "coffee-v1-svc"},
			{"GET", "/coffee?queryRegex=query-", nil, "coffee-v1-svc"},
			{"POST", "/tea", nil, "tea-post-svc"},
			{"GET", "/tea", nil, "tea-svc"},
		} {
			if x := c.do(r.method, "cafe.example.com", r.path, r.header); x.status != http.StatusOK || x.echo.Backend != r.want {
				t.Errorf("%s %s %v: %s, want 200 from %s", r.method, r.path, r.header, x, r.want)
			}
		}
	})
}
