package status

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAddressCondition(t *testing.T) {
	svc := func(ingress string, cond *metav1.Condition) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "gw-nginx"}}
		if ingress != "" {
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ingress}}
		}
		if cond != nil {
			s.Status.Conditions = []metav1.Condition{*cond}
		}
		return s
	}
	refused := &metav1.Condition{Type: ServiceConditionLoadBalancerIP, Status: metav1.ConditionFalse, Message: "10.9.9.9 is outside the range"}
	for _, tc := range []struct {
		name      string
		requested []string
		svc       *corev1.Service
		reason    string // "" when no condition
	}{
		{name: "nothing requested", svc: svc("127.0.3.1", nil)},
		{name: "assigned", requested: []string{"127.0.3.250"}, svc: svc("127.0.3.250", nil)},
		{name: "not assigned yet", requested: []string{"127.0.3.250"}, svc: svc("", nil), reason: "AddressNotAssigned"},
		{name: "another address assigned", requested: []string{"127.0.3.250"}, svc: svc("127.0.3.1", nil), reason: "AddressNotAssigned"},
		{name: "refused by the load balancer", requested: []string{"10.9.9.9"}, svc: svc("", refused), reason: "AddressNotUsable"},
		{name: "several", requested: []string{"127.0.3.250", "127.0.3.251"}, svc: svc("127.0.3.250", nil), reason: "AddressNotUsable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := AddressCondition(tc.requested, tc.svc)
			switch {
			case tc.reason == "" && c != nil:
				t.Errorf("got %+v, want none", c)
			case tc.reason != "" && (c == nil || c.Reason != tc.reason || c.Status != metav1.ConditionFalse || c.Type != "Programmed"):
				t.Errorf("got %+v, want Programmed=False %s", c, tc.reason)
			}
		})
	}
}
