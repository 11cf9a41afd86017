package graph

import (
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func extAuthRule(http *gatewayv1.HTTPAuthConfig) gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/a")}, BackendRefs: appRefs(),
		Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExternalAuth, ExternalAuth: &gatewayv1.HTTPExternalAuthFilter{
			ExternalAuthProtocol: gatewayv1.HTTPRouteExternalAuthHTTPProtocol, BackendRef: appBackend, HTTPAuthConfig: http}}}}
}

// TestExternalAuthHeaders: the headers the authorization service gets and
// the ones its answer gives are each listed once; those it always gets are
// not listed again; headers that frame or carry a connection are refused
// both ways (the service's request, or the backend's, would be corrupted:
// a client's chunked Transfer-Encoding sent to the service with no body).
func TestExternalAuthHeaders(t *testing.T) {
	for name, c := range map[string]struct {
		http          gatewayv1.HTTPAuthConfig
		request, resp string
		err           string
	}{
		"each once, the always-sent left out": {
			http:    gatewayv1.HTTPAuthConfig{AllowedRequestHeaders: []string{"X-Api-Key", "x-api-key", "Host", "authorization", "Content-Length", "X-Gatewall-Loop", "Cookie"}, AllowedResponseHeaders: []string{"X-User", "x-user"}},
			request: "X-Api-Key Cookie", resp: "X-User",
		},
		"a framing request header":   {http: gatewayv1.HTTPAuthConfig{AllowedRequestHeaders: []string{"Transfer-Encoding"}}, err: `header "Transfer-Encoding" is never sent`},
		"a connection header":        {http: gatewayv1.HTTPAuthConfig{AllowedRequestHeaders: []string{"connection"}}, err: `header "connection" is never sent`},
		"a framing answer header":    {http: gatewayv1.HTTPAuthConfig{AllowedResponseHeaders: []string{"Content-Length"}}, err: `header "Content-Length" is never copied`},
		"Host from the answer":       {http: gatewayv1.HTTPAuthConfig{AllowedResponseHeaders: []string{"host"}}, err: `header "host" is never copied`},
		"the loop header":            {http: gatewayv1.HTTPAuthConfig{AllowedResponseHeaders: []string{"X-Gatewall-Loop"}}, err: "Gatewall's own"},
		"a header NGINX cannot name": {http: gatewayv1.HTTPAuthConfig{AllowedRequestHeaders: []string{"X_Under"}}, err: "letters, digits and '-'"},
	} {
		t.Run(name, func(t *testing.T) {
			g := buildTest(t, testInput(testHTTPRoute("r", extAuthRule(&c.http))))
			rule := g.Routes[0].Rules[0]
			if c.err != "" {
				if rule.Valid || !strings.Contains(rule.Err, c.err) {
					t.Fatalf("valid %v, error %q; want it refused with %q", rule.Valid, rule.Err, c.err)
				}
				return
			}
			if !rule.Valid {
				t.Fatal(rule.Err)
			}
			ea := rule.Filters.ExternalAuth
			if got := strings.Join(ea.RequestHeaders, " "); got != c.request {
				t.Errorf("request headers %q, want %q", got, c.request)
			}
			if got := strings.Join(ea.ResponseHeaders, " "); got != c.resp {
				t.Errorf("response headers %q, want %q", got, c.resp)
			}
		})
	}
}
