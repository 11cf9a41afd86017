package balancer

import (
	"net/http"
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// ngfScenarios are header-filter and advanced-routing scenarios of the
// shapes NGF's guides use (request and response headers set, added and
// removed, some from variables; header, query and method matches, regexes
// with quantifiers), and values the Gateway API's examples and users write.
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
  hostnames: [inspect.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set:
        - {name: X-Replaced, value: only-this-value}
        - {name: X-Client-IP, value: $remote_addr}
        add:
        - {name: Accept-Encoding, value: compress}
        - {name: X-Appended, value: appended-by-route}
        - {name: X-Request-Method, value: $request_method}
        remove: [User-Agent]
    backendRefs: [{name: headers, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: response-headers, namespace: ns}
spec:
  parentRefs: [{name: gateway, sectionName: http}]
  hostnames: [shop.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
    filters:
    - type: ResponseHeaderModifier
      responseHeaderModifier:
        set:
        - {name: X-Set-Here, value: replaced-value}
        - {name: X-Real-IP, value: $remote_addr}
        add:
        - {name: X-Added-Here, value: added-by-route}
        - {name: X-Request-ID, value: $request_id}
        remove: [X-Dropped]
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
metadata: {name: orders, namespace: ns}
spec:
  parentRefs: [{name: gateway}]
  hostnames: [shop.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /orders}}]
    backendRefs: [{name: orders-v1, port: 80}]
  - matches:
    - {path: {type: PathPrefix, value: /orders}, headers: [{name: X-Track, value: beta}]}
    - {path: {type: PathPrefix, value: /orders}, queryParams: [{name: track, value: beta}]}
    backendRefs: [{name: orders-v2, port: 80}]
  - matches:
    - {path: {type: PathPrefix, value: /orders}, headers: [{name: X-Variant, type: RegularExpression, value: "variant-[a-z]{1}"}]}
    - {path: {type: PathPrefix, value: /orders}, queryParams: [{name: pick, type: RegularExpression, value: "pick-[a-z]{1}"}]}
    backendRefs: [{name: orders-v3, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: catalog, namespace: ns}
spec:
  parentRefs: [{name: gateway}]
  hostnames: [shop.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /catalog}, method: POST}]
    backendRefs: [{name: catalog-writes, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /catalog}, method: GET}]
    backendRefs: [{name: catalog-reads, port: 80}]
`

// ngfServices are the Services of ngfScenarios.
var ngfServices = []string{"headers", "orders-v1", "orders-v2", "orders-v3", "catalog-reads", "catalog-writes"}

func ngfManifests() string {
	text := ngfScenarios
	for _, svc := range ngfServices {
		text += "---\napiVersion: v1\nkind: Service\nmetadata: {name: " + svc + ", namespace: ns}\nspec: {ports: [{name: http, port: 80}]}\n"
	}
	return text
}

// TestNGFHeaderScenarios serves the header-filter and advanced-routing
// scenarios through real NGINX: request headers set from $remote_addr and
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
			"X-Untouched": {"unmodified"}, "X-Added-Here": {"add-to"}, "X-Set-Here": {"overwrite"}, "X-Dropped": {"remove"}})
		key := types.NamespacedName{Namespace: "ns", Name: svc}
		set[config.UpstreamID(key, 80)] = endpoints.Upstream{Name: config.UpstreamName(key, 80), Endpoints: []string{b.addr}}
	}
	d.setEndpoints(set)
	c := d.newClient()

	t.Run("request headers", func(t *testing.T) {
		x := c.do("GET", "inspect.example.com", "/headers", http.Header{"X-Appended": {"my-client-value"},
			"X-Replaced": {"client-sent-this"}, "Accept-Encoding": {"gzip"}, "User-Agent": {"curl/8"}})
		want := map[string]string{"X-Replaced": "only-this-value", "X-Client-Ip": "127.0.0.1",
			"Accept-Encoding": "gzip,compress", "X-Appended": "my-client-value,appended-by-route", "X-Request-Method": "GET"}
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
		x := c.do("GET", "shop.example.com", "/headers", nil)
		for name, v := range map[string]string{"X-Untouched": "unmodified", "X-Set-Here": "replaced-value", "X-Real-Ip": "127.0.0.1"} {
			if got, _ := one(t, x.header, name); got != v {
				t.Errorf("the client received %s: %q, want %q", name, got, v)
			}
		}
		if got := x.header.Values("X-Added-Here"); len(got) != 2 || got[0] != "add-to" || got[1] != "added-by-route" {
			t.Errorf("the client received X-Added-Here %q, want the backend's then the route's", got)
		}
		if got, ok := one(t, x.header, "X-Dropped"); ok {
			t.Errorf("the client received X-Dropped %q, which the route removes", got)
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
			{"GET", "/orders", nil, "orders-v1"},
			{"GET", "/orders", http.Header{"X-Track": {"beta"}}, "orders-v2"},
			{"GET", "/orders?track=beta", nil, "orders-v2"},
			{"GET", "/orders", http.Header{"X-Variant": {"variant-a"}}, "orders-v3"},
			{"GET", "/orders?pick=pick-a", nil, "orders-v3"},
			// Not matched: no letter after the dash.
			{"GET", "/orders", http.Header{"X-Variant": {"variant-1"}}, "orders-v1"},
			{"GET", "/orders?pick=pick-", nil, "orders-v1"},
			{"POST", "/catalog", nil, "catalog-writes"},
			{"GET", "/catalog", nil, "catalog-reads"},
		} {
			if x := c.do(r.method, "shop.example.com", r.path, r.header); x.status != http.StatusOK || x.echo.Backend != r.want {
				t.Errorf("%s %s %v: %s, want 200 from %s", r.method, r.path, r.header, x, r.want)
			}
		}
	})
}
