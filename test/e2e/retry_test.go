package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/local/images"
)

// TestRetryHidesAFlakyBackend: a Service of two pods, each answering every
// third request with 503. Through a rule that retries 503 twice, 300
// requests in a row all succeed; through the same backends without retry,
// about a third fail (the backend really fails). The runtime installs the
// experimental channel's HTTPRoute, where retry lives in Gateway API v1.6.
func TestRetryHidesAFlakyBackend(t *testing.T) {
	ns := namespace(t, "e2e-retry")
	gatewayClass(t)
	c := corev1.Container{
		Name: "backend", Image: images.TestBackend, Args: []string{"-listen", ":8080"}, Env: podIdentityEnv(),
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
	}
	create(t, app(ns, "flaky", 2, c, nil, corev1.ServicePort{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)})...)
	retrying := httpRoute(ns, "retrying", "gw", "retry.example.com", "/", "flaky")
	retrying.Spec.Rules[0].Retry = &gatewayv1.HTTPRouteRetry{
		Attempts: ptr.To(2), Codes: []gatewayv1.HTTPRouteRetryStatusCode{503},
	}
	plain := httpRoute(ns, "plain", "gw", "plain.example.com", "/", "flaky")
	create(t, gateway(ns, "gw"), retrying, plain)
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 120*time.Second)
	// Both pods serve before counting (a request to a pod not ready yet is
	// not what this test measures).
	eventually(t, 90*time.Second, func() error {
		seen := map[string]bool{}
		for range 20 {
			code, body, err := get(addr, "plain.example.com", "/pod")
			if err != nil || code != 200 {
				return errf("GET /pod: %d %v", code, err)
			}
			seen[strings.TrimSpace(body)] = true
		}
		if len(seen) < 2 {
			return errf("one pod of two answers: %v", seen)
		}
		return nil
	})

	count := func(host string, n int) (failed int) {
		for range n {
			code, _, err := get(addr, host, "/flaky")
			if err != nil {
				t.Fatalf("GET %s/flaky: %v", host, err)
			}
			if code != 200 {
				failed++
			}
		}
		return failed
	}
	const n = 300
	t.Run("with retry the client sees no failure", func(t *testing.T) {
		if failed := count("retry.example.com", n); failed > 0 {
			t.Errorf("%d of %d requests failed through the retrying rule", failed, n)
		}
	})
	t.Run("without retry a share fails", func(t *testing.T) {
		failed := count("plain.example.com", n)
		t.Logf("%d of %d requests failed without retry", failed, n)
		if failed < n/6 {
			t.Errorf("only %d of %d failed without retry: the backend does not fail as the test needs", failed, n)
		}
	})
}
