package graph

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// retryingRoute is an HTTPRoute on overlayInput's Gateway whose one rule
// retries 503 attempts times (nil: no attempts named).
func retryingRoute(attempts *int) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules: []gatewayv1.HTTPRouteRule{{
				Retry: &gatewayv1.HTTPRouteRetry{Codes: []gatewayv1.HTTPRouteRetryStatusCode{503}, Attempts: attempts},
			}},
		},
	}
}

func upstreams(u v1alpha2.Upstreams) *v1alpha2.NginxProxySpec {
	return &v1alpha2.NginxProxySpec{Upstreams: &u}
}

// TestRetriesBoundedByTheGateway: a request is sent at most the Gateway's
// maxRetries + 1 times in all, whatever a route's retry asks; a route asking
// more is served with the bound and its Accepted message says so; 0 serves
// it without its retry (the Gateway's connection tries apply). A Gateway's
// NginxProxy lowers its class's bound, never raises it (the class's unset
// bound is the default, 3).
func TestRetriesBoundedByTheGateway(t *testing.T) {
	for _, c := range []struct {
		name      string
		class, gw *v1alpha2.NginxProxySpec
		attempts  *int
		tries     int // 0: the rule has no retry
		note      string
	}{
		{"default bound, within", nil, nil, ptr.To(3), 4, ""},
		{"default bound, asked more", nil, nil, ptr.To(10), 4, "retry is served with 3 retries, not 10"},
		{"no attempts named: the Gateway's maxTries", upstreams(v1alpha2.Upstreams{MaxTries: ptr.To(int32(3))}), nil, nil, 3, ""},
		{"no attempts named, maxTries over the bound", upstreams(v1alpha2.Upstreams{MaxTries: ptr.To(int32(8)), MaxRetries: ptr.To(int32(2))}), nil, nil, 3,
			"retry is served with 2 retries, not 7"},
		{"the class raises the bound", upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(10))}), nil, ptr.To(10), 11, ""},
		{"the Gateway lowers it", upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(10))}), upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(1))}), ptr.To(5), 2,
			"retry is served with 1 retries, not 5"},
		{"the Gateway cannot raise the class's", upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(2))}), upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(9))}), ptr.To(5), 3,
			"allows at most 2"},
		{"nor the default without a class NginxProxy", nil, upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(9))}), ptr.To(5), 4,
			"allows at most 3"},
		{"0: no retries", upstreams(v1alpha2.Upstreams{MaxRetries: ptr.To(int32(0))}), nil, ptr.To(2), 0,
			"retry is not applied: the Gateway's NginxProxy allows no retries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := overlayInput(c.class, c.gw)
			in.Add(retryingRoute(c.attempts))
			g := Build(in, key("default", "gw"))
			if len(g.Routes) != 1 || len(g.Routes[0].Rules) != 1 {
				t.Fatalf("routes %v", g.Routes)
			}
			rule := g.Routes[0].Rules[0]
			switch {
			case c.tries == 0 && rule.Retry != nil:
				t.Errorf("the rule keeps its retry (%d tries)", rule.Retry.Tries)
			case c.tries != 0 && (rule.Retry == nil || rule.Retry.Tries != c.tries):
				t.Errorf("retry %+v, want %d tries", rule.Retry, c.tries)
			}
			accepted := meta.FindStatusCondition(g.Routes[0].Parents[0].Conditions, string(gatewayv1.RouteConditionAccepted))
			if accepted == nil || accepted.Status != metav1.ConditionTrue {
				t.Fatalf("route not accepted: %+v", accepted)
			}
			if c.note == "" && strings.Contains(accepted.Message, "retr") || !strings.Contains(accepted.Message, c.note) {
				t.Errorf("Accepted message %q, want it to say %q", accepted.Message, c.note)
			}
		})
	}
}
