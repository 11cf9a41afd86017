package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/test/testenv"
)

// The helpers shared with the other tests on a local runtime live in
// testenv; these short names keep the tests readable.

const echoImage = images.Echo

var httpClient = &http.Client{Timeout: 5 * time.Second}

func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, cond)
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	rt.Create(t, objs...)
}

func namespace(t *testing.T, name string) string {
	t.Helper()
	return rt.Namespace(t, name)
}

func gatewayClass(t *testing.T) { t.Helper(); rt.GatewayClass(t) }

func gateway(ns, name string) *gatewayv1.Gateway { return testenv.Gateway(ns, name) }

func echo(ns, name string, replicas int32) []client.Object { return testenv.Echo(ns, name, replicas) }

func podIdentityEnv() []corev1.EnvVar { return testenv.PodIdentityEnv() }

func app(ns, name string, replicas int32, c corev1.Container, vols []corev1.Volume, port corev1.ServicePort) []client.Object {
	return testenv.App(ns, name, replicas, c, vols, port)
}

func httpRoute(ns, name, gw, host, path, svc string) *gatewayv1.HTTPRoute {
	return testenv.HTTPRoute(ns, name, gw, host, path, svc)
}

func programmedAddress(t *testing.T, key types.NamespacedName, timeout time.Duration) string {
	t.Helper()
	return rt.ProgrammedAddress(t, key, timeout)
}

func get(addr, host, path string) (int, string, error) { return testenv.Get(addr, host, path) }

func serves(t *testing.T, addr, host, path string, want int, sub string, timeout time.Duration) {
	t.Helper()
	testenv.Serves(t, addr, host, path, want, sub, timeout)
}

func trunc(s string) string { return testenv.Trunc(s) }

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func watchEvents(t *testing.T, since time.Time) *testenv.AgentEvents {
	t.Helper()
	return rt.WatchEvents(t, since)
}
