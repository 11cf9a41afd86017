package graph

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestCORSMaxAge: an unset maxAge (0 in the Go type, as an API server
// without the schema's default stores it) gets the Gateway API's default;
// a set one is kept; a negative one is refused.
func TestCORSMaxAge(t *testing.T) {
	for _, c := range []struct {
		in, want int32
		err      bool
	}{{0, CORSDefaultMaxAge, false}, {1, 1, false}, {86400, 86400, false}, {-1, 0, true}} {
		got, err := cors(&gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://a.example.com"}, MaxAge: c.in})
		switch {
		case c.err && err == nil:
			t.Errorf("maxAge %d: accepted as %d, want refused", c.in, got.MaxAge)
		case !c.err && err != nil:
			t.Errorf("maxAge %d: %v", c.in, err)
		case !c.err && got.MaxAge != c.want:
			t.Errorf("maxAge %d: rendered as %d, want %d", c.in, got.MaxAge, c.want)
		}
	}
}
