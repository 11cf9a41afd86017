package config_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// atWorkerConnections is httpInput's Gateway (a route to app, whose
// endpoint is 10.0.0.1:8080) with workerConnections n.
func atWorkerConnections(n int32) *graph.Input {
	in := httpInput(httpRoute("r", nil, gatewayv1.HTTPRouteRule{}))
	in.Add(&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "np"}, Spec: v1alpha2.NginxProxySpec{WorkerConnections: ptr.To(n)}})
	in.Gateways[testGateway].Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "np"}}
	return in
}

// TestServedAtTheBound: with the fewest workerConnections Gatewall
// accepts for a Gateway, real NGINX answers the readiness probe and
// serves clients through the Gateway's route. With one connection more
// than its listening sockets, which Gatewall used to accept (and nginx -t
// does), NGINX serves nothing: every connection, the probe's included,
// is closed at once ("worker_connections are not enough").
func TestServedAtTheBound(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	bound := int32(0)
	var cfg *config.Config
	for n := int32(1); n < 200 && bound == 0; n++ {
		g := graph.Build(atWorkerConnections(n), testGateway)
		if g.Valid && len(g.ValidListeners()) == 1 && g.Routes[0].Parents[0].Attached() {
			bound, cfg = n, config.Build(g, config.Includes{})
		}
	}
	if bound == 0 {
		t.Fatal("no workerConnections under 200 serves the Gateway")
	}
	sockets := len(cfg.ListeningSockets())
	t.Logf("%d listening sockets; Gatewall accepts workerConnections from %d", sockets, bound)
	if int(bound) < sockets+graph.ClientConnections {
		t.Fatalf("workerConnections %d accepted for %d sockets: fewer than %d left for clients", bound, sockets, graph.ClientConnections)
	}

	t.Run("the bound serves the probe and clients", func(t *testing.T) {
		s := serve(t, cfg)
		if err := s.SetEndpoints(cfg.Endpoints()); err != nil {
			t.Fatal(err)
		}
		if code, _, err := get(s, "127.0.0.1:8081", config.ReadinessPath); err != nil || code != http.StatusNoContent {
			t.Fatalf("readiness probe: %d %v", code, err)
		}
		// Clients at once, each a connection to NGINX and one to the backend.
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if code, body, err := get(s, "127.0.0.1:80", "/"); err != nil || code != http.StatusOK || body != "backend" {
					errs <- fmt.Errorf("client: %d %q %v", code, body, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
	t.Run("one more than the sockets serves nothing", func(t *testing.T) {
		cfg.Main.WorkerConnections = int32(sockets + 1)
		s := serve(t, cfg)
		if code, _, err := get(s, "127.0.0.1:8081", config.ReadinessPath); err == nil {
			t.Fatalf("readiness probe answered %d: the case shows nothing", code)
		}
	})
}

// serve runs real NGINX on the configuration, with app's backend
// (10.0.0.1:8080, answering "backend") in its network namespace. The
// probe's port is open once it returns (NGINX listens before workers
// serve).
func serve(t *testing.T, cfg *config.Config) *nginxtest.Server {
	t.Helper()
	nginxtest.RequireRoot(t)
	s, err := nginxtest.Serve(cfg.Files(), int(cfg.Main.ReadinessPort), "10.0.0.1/32")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		out := s.Stop()
		if ws := nginxtest.Warnings(out); t.Failed() || len(ws) > 0 && cfg.Main.WorkerConnections > int32(len(cfg.ListeningSockets())+1) {
			t.Errorf("NGINX:\n%s", out)
		}
	})
	l, err := s.Listen("tcp", "10.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "backend") })}
	go func() { _ = backend.Serve(l) }() // returns ErrServerClosed at cleanup
	t.Cleanup(func() { _ = backend.Close() })
	return s
}

// get sends GET path to addr in NGINX's namespace, on a new connection.
func get(s *nginxtest.Server, addr, path string) (int, string, error) {
	c := &http.Client{Transport: &http.Transport{DialContext: s.DialContext, DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}
