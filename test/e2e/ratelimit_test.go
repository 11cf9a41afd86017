package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

func rateLimit(ns, name, kind, target string, rl v1alpha1.RateLimit) *v1alpha1.RateLimitPolicy {
	return &v1alpha1.RateLimitPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.RateLimitPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target)}},
		RateLimit:  &rl,
	}}
}

// statuses sends n requests in a row and returns their status codes.
func statuses(t *testing.T, addr, host string, n int) []int {
	t.Helper()
	var out []int
	for i := 0; i < n; i++ {
		code, _, err := get(addr, host, "/")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, code)
	}
	return out
}

// TestRateLimit: a Gateway's RateLimitPolicy (one request a minute per
// client address, rejectCode 429) answers a client's second request with
// 429 on every route; a route's own policy in dryRun counts but lets every
// request through; a route policy with an empty local (no rules) turns the
// Gateway's limit off there.
func TestRateLimit(t *testing.T) {
	ns := namespace(t, "e2e-ratelimit")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, testBackend(t, ns, "backend")...)
	for _, r := range []string{"limited", "dryrun", "unlimited"} {
		create(t, httpRoute(ns, r, "gw", r+".example.com", "/", "backend"))
	}
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)
	for _, r := range []string{"limited", "dryrun", "unlimited"} {
		serves(t, addr, r+".example.com", "/", 200, "testbackend", 60*time.Second)
	}

	create(t, rateLimit(ns, "dry", "HTTPRoute", "dryrun", v1alpha1.RateLimit{DryRun: ptr.To(true)}))
	create(t, rateLimit(ns, "off", "HTTPRoute", "unlimited", v1alpha1.RateLimit{Local: &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{}}}))
	create(t, rateLimit(ns, "per-client", "Gateway", "gw", v1alpha1.RateLimit{
		RejectCode: ptr.To(int32(429)),
		Local:      &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{{Rate: "1r/m", Key: "$binary_remote_addr"}}},
	}))
	for _, name := range []string{"dry", "off", "per-client"} {
		eventually(t, 60*time.Second, func() error { return kindProgrammed(&v1alpha1.RateLimitPolicy{}, ns, name) })
	}

	got := statuses(t, addr, "limited.example.com", 3)
	if got[0] != 200 || got[1] != 429 || got[2] != 429 {
		t.Errorf("limited route: %v, want 200 then 429s (one request a minute, rejectCode 429)", got)
	}
	if got := statuses(t, addr, "dryrun.example.com", 3); got[0] != 200 || got[1] != 200 || got[2] != 200 {
		t.Errorf("route in dryRun: %v, want every request through", got)
	}
	if got := statuses(t, addr, "unlimited.example.com", 3); got[0] != 200 || got[1] != 200 || got[2] != 200 {
		t.Errorf("route whose policy has no rules: %v, want the Gateway's limit off", got)
	}
}
