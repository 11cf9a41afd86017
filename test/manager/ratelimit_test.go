package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

// TestRateLimitPolicyStatuses: a Gateway's RateLimitPolicy declares its
// zone at http level and limits every route in its locations, with the
// Affected condition on the route; the API server refuses a zone NGINX
// finds too small.
func TestRateLimitPolicyStatuses(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.3.10"), gateway(ns, "gw"), httpRoute(ns, "r", "gw", "app"))
	gwKey, routeKey := types.NamespacedName{Namespace: ns, Name: "gw"}, types.NamespacedName{Namespace: ns, Name: "r"}
	p := &v1alpha1.RateLimitPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "per-client"}, Spec: v1alpha1.RateLimitPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}},
		RateLimit: &v1alpha1.RateLimit{RejectCode: ptr.To(int32(429)),
			Local: &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{{Rate: "10r/s", Key: "$binary_remote_addr", Burst: ptr.To(int32(5))}}}},
	}}
	create(t, p)
	zone := "rl_" + ns + "_per-client_0"
	routeInclude := config.RouteIncludePath("rate-limit", graph.ObjectRef{Kind: "HTTPRoute", Key: routeKey})

	eventually(t, 15*time.Second, func() error {
		got, msg, err := policyAncestorConditions(&v1alpha1.RateLimitPolicy{}, client.ObjectKeyFromObject(p), "gw")
		if err != nil {
			return err
		}
		if got != "Accepted=True/Accepted Programmed=False/Pending" {
			return fmt.Errorf("%s (%s)", got, msg)
		}
		if f := heldFile(gwKey, config.IncludesDir+"rate-limit.conf"); !strings.Contains(f, "limit_req_zone $binary_remote_addr zone="+zone+":10m rate=10r/s;") {
			return fmt.Errorf("the http include is %q", f)
		}
		if f := heldFile(gwKey, routeInclude); !strings.Contains(f, "limit_req zone="+zone+" burst=5;") || !strings.Contains(f, "limit_req_status 429;") {
			return fmt.Errorf("the route's include is %q", f)
		}
		r := &gatewayv1.HTTPRoute{}
		if err := env.Client.Get(ctx, routeKey, r); err != nil {
			return err
		}
		if len(r.Status.Parents) == 0 || condition(r.Status.Parents[0].Conditions, v1alpha1.RateLimitPolicyAffected) != "True/PolicyAffected" {
			return fmt.Errorf("route parents %+v, want RateLimitPolicyAffected", r.Status.Parents)
		}
		return nil
	})

	// The API server refuses what NGINX would (its Go re-check is covered
	// by the golden case ratelimit, which bypasses the API server).
	bad := p.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "tiny-zone"}
	bad.Spec.RateLimit.Local.Rules[0].ZoneSize = ptr.To(v1alpha1.ByteSize("16k"))
	if err := env.Client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "32k") {
		t.Fatalf("a 16k zone: %v, want the API server to refuse it naming the 32k minimum", err)
	}
}
