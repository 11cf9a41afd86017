package render_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/validation"
)

// checkStatusBounds: every status fits what the API server stores (the
// Gateway API's maxItems on statuses): at most 8 conditions in any list,
// 64 listeners in a Gateway's or ListenerSet's status, 32 parents in a
// route's, 16 ancestors in a policy's. A status over one is refused whole,
// and the object would keep a stale status forever.
func checkStatusBounds(t testing.TB, statuses []client.Object) {
	t.Helper()
	conds := func(o client.Object, what string, cs []metav1.Condition) {
		if len(cs) > validation.MaxConditions {
			t.Errorf("%T %s/%s: %s has %d conditions, more than %d", o, o.GetNamespace(), o.GetName(), what, len(cs), validation.MaxConditions)
		}
	}
	count := func(o client.Object, what string, n, limit int) {
		if n > limit {
			t.Errorf("%T %s/%s: %s has %d items, more than %d", o, o.GetNamespace(), o.GetName(), what, n, limit)
		}
	}
	parents := func(o client.Object, ps []gatewayv1.RouteParentStatus) {
		count(o, "status.parents", len(ps), validation.MaxParentRefs)
		for _, p := range ps {
			conds(o, "a parent", p.Conditions)
		}
	}
	for _, o := range statuses {
		switch s := o.(type) {
		case *gatewayv1.GatewayClass:
			conds(o, "status", s.Status.Conditions)
		case *gatewayv1.Gateway:
			conds(o, "status", s.Status.Conditions)
			count(o, "status.listeners", len(s.Status.Listeners), validation.MaxListeners)
			for _, l := range s.Status.Listeners {
				conds(o, "a listener", l.Conditions)
			}
		case *gatewayv1.ListenerSet:
			conds(o, "status", s.Status.Conditions)
			count(o, "status.listeners", len(s.Status.Listeners), validation.MaxListeners)
			for _, l := range s.Status.Listeners {
				conds(o, "a listener", l.Conditions)
			}
		case *gatewayv1.HTTPRoute:
			parents(o, s.Status.Parents)
		case *gatewayv1.GRPCRoute:
			parents(o, s.Status.Parents)
		case *gatewayv1.TLSRoute:
			parents(o, s.Status.Parents)
		case *gatewayv1.BackendTLSPolicy:
			count(o, "status.ancestors", len(s.Status.Ancestors), status.MaxAncestors)
			for _, a := range s.Status.Ancestors {
				conds(o, "an ancestor", a.Conditions)
			}
		case v1alpha1.PolicyWithStatus:
			st := s.PolicyStatus()
			count(o, "status.ancestors", len(st.Ancestors), status.MaxAncestors)
			for _, a := range st.Ancestors {
				conds(o, "an ancestor", a.Conditions)
			}
		}
	}
}
