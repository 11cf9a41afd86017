package config_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestListeningSocketsAreNginxs: the sockets Gatewall counts are those
// real NGINX opens: with one worker connection more than counted NGINX
// accepts the configuration (and then serves nothing: TestServedAtTheBound),
// with exactly as many it refuses it ("not enough for N listening
// sockets"); and the graph's budget counts at least as many.
func TestListeningSocketsAreNginxs(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	grpc := &gatewayv1.GRPCRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
		Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: appRef[0].BackendRef}}}},
		},
	}
	missing := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: "missing", Port: ptr.To[gatewayv1.PortNumber](80)}}}
	split := httpRoute("split", nil, gatewayv1.HTTPRouteRule{BackendRefs: append([]gatewayv1.HTTPBackendRef{missing}, appRef...)})
	cases := []struct {
		name   string
		in     func(t *testing.T) *graph.Input
		family v1alpha2.IPFamily
		// noMetrics turns the data plane's metrics off; they are on by
		// default, and their status server is one unix socket more. Every
		// case has the readiness server too (one socket per IP family),
		// and the endpoints server (one unix socket); a case with a
		// backend has the 503 sink its upstream falls back to (two unix
		// sockets).
		noMetrics bool
		want      int
	}{
		{"HTTP on IPv4 and IPv6", func(*testing.T) *graph.Input { return httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})) }, "", false, 8},
		{"HTTP on IPv4", func(*testing.T) *graph.Input { return httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})) }, v1alpha2.IPFamilyIPv4, false, 6},
		{"HTTP on IPv4, no metrics", func(*testing.T) *graph.Input { return httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})) }, v1alpha2.IPFamilyIPv4, true, 5},
		{"HTTP on IPv6", func(*testing.T) *graph.Input { return httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{})) }, v1alpha2.IPFamilyIPv6, false, 6},
		{"HTTP and HTTPS", func(t *testing.T) *graph.Input { return hostsInput(t, "a.example.com") }, "", true, 7},
		// The stream server on both families, and two unix sockets.
		{"HTTP and gRPC on one port", func(*testing.T) *graph.Input { return httpInput(grpc) }, "", true, 9},
		{"HTTP and gRPC on one port, IPv4", func(*testing.T) *graph.Input { return httpInput(grpc) }, v1alpha2.IPFamilyIPv4, true, 7},
		// The 500 sink answering the share of a missing backend: two unix sockets.
		{"a split with a missing backend", func(*testing.T) *graph.Input { return httpInput(split) }, "", true, 9},
		// HTTP on both families (2); on 443, the stream server on both
		// families (2), the HTTPS servers' socket, the closing server's and
		// the two passing servers' (one to app, one sharing with a missing
		// Service).
		{"TLS passthrough and HTTPS on one port", passthroughTwoRoutes, "", true, 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.Build(c.in(t), types.NamespacedName{Namespace: "ns", Name: "gw"})
			if !g.Valid {
				t.Fatalf("the Gateway is not valid: %+v", g.Conditions)
			}
			if c.family != "" {
				g.NginxProxy.IPFamily = ptr.To(c.family)
			}
			if c.noMetrics {
				g.NginxProxy.Metrics = &v1alpha2.Metrics{Disable: ptr.To(true)}
			}
			cfg := config.Build(g, config.Includes{})
			sockets := cfg.ListeningSockets()
			if len(sockets) != c.want {
				t.Fatalf("counted sockets %v, want %d", sockets, c.want)
			}
			if budgeted := g.ListeningSockets(); budgeted < len(sockets) {
				t.Errorf("the graph budgets %d sockets, the configuration opens %d", budgeted, len(sockets))
			}
			cfg.Main.WorkerConnections = int32(c.want + 1)
			if out, err := nginxtest.Test(cfg.Files()); err != nil {
				t.Errorf("%d connections: %v\n%s", c.want+1, err, out)
			}
			cfg.Main.WorkerConnections = int32(c.want)
			out, err := nginxtest.Test(cfg.Files())
			if want := fmt.Sprintf("%d worker_connections are not enough for %d listening sockets", c.want, c.want); err == nil || !strings.Contains(out, want) {
				t.Errorf("%d connections: NGINX says %q, want %q", c.want, out, want)
			}
		})
	}
}
