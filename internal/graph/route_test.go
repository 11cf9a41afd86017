package graph

import (
	"reflect"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/routekind"
)

func TestIntersectHostnames(t *testing.T) {
	cases := []struct {
		listener string
		route    []string
		want     []string
	}{
		{"", nil, []string{""}},
		{"", []string{"b.com", "a.com", "a.com"}, []string{"a.com", "b.com"}},
		{"foo.example.com", nil, []string{"foo.example.com"}},
		{"foo.example.com", []string{"foo.example.com"}, []string{"foo.example.com"}},
		{"foo.example.com", []string{"bar.example.com"}, nil},
		{"*.example.com", []string{"foo.example.com", "a.b.example.com", "example.com", "other.org"}, []string{"a.b.example.com", "foo.example.com"}},
		{"foo.example.com", []string{"*.example.com"}, []string{"foo.example.com"}},
		{"*.example.com", []string{"*.foo.example.com"}, []string{"*.foo.example.com"}},
		{"*.foo.example.com", []string{"*.example.com"}, []string{"*.foo.example.com"}},
		{"*.example.com", []string{"*.example.org"}, nil},
	}
	for _, c := range cases {
		if got := intersectHostnames(c.listener, c.route); !reflect.DeepEqual(got, c.want) {
			t.Errorf("intersectHostnames(%q, %q) = %q, want %q", c.listener, c.route, got, c.want)
		}
	}
}

func TestNginxDuration(t *testing.T) {
	for in, want := range map[string]string{"10s": "10000ms", "500ms": "500ms", "1h30m": "5400000ms", "0s": ""} {
		got, err := nginxDuration(in)
		if err != nil || got != want {
			t.Errorf("nginxDuration(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "1d", "1.5s", "123456s", "-1s", "10s;"} {
		if _, err := nginxDuration(in); err == nil {
			t.Errorf("nginxDuration(%q) succeeded, want an error", in)
		}
	}
}

// TestPartiallyInvalidMessage: the Gateway API requires the message of a
// route whose invalid rules are dropped to start with "Dropped Rule".
func TestPartiallyInvalidMessage(t *testing.T) {
	bad := gatewayv1.HTTPRouteRule{BackendRefs: appRefs(), Filters: []gatewayv1.HTTPRouteFilter{{Type: "Unknown"}}}
	g := buildTest(t, testInput(testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()}, bad)))
	var msg string
	for _, c := range g.Routes[0].Parents[0].Conditions {
		if c.Type == string(gatewayv1.RouteConditionPartiallyInvalid) {
			msg = c.Message
		}
	}
	if !strings.HasPrefix(msg, "Dropped Rule") || !strings.Contains(msg, "spec.rules[1]") {
		t.Errorf("PartiallyInvalid message %q", msg)
	}
}

// TestEveryRouteKindIsBuilt: every kind of the registry has a graph
// builder, and the graph builds no kind the registry lacks (the manager
// would neither watch nor read it).
func TestEveryRouteKindIsBuilt(t *testing.T) {
	registered := map[string]bool{}
	for _, k := range routekind.Kinds {
		registered[k.Name] = true
		if rk, ok := routeKinds[k.Name]; !ok || rk.build == nil || len(rk.protocols) == 0 {
			t.Errorf("route kind %s is registered in routekind but routeKinds has no builder or protocols for it", k.Name)
		}
	}
	for name := range routeKinds {
		if !registered[name] {
			t.Errorf("routeKinds builds %s, which routekind.Kinds does not register", name)
		}
	}
}
