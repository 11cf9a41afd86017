package scale

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// policies are -scale.policies ClientSettingsPolicies: cs-0 on the big
// Gateway (the default of every route), cs-1... on routes r0, r1...
// (each overriding the body size on its route). With them, every change
// of churn also runs the policy reconcilers, writes their statuses and
// renders their settings into the routes' locations.
func policies(ns string, n int) []client.Object {
	var out []client.Object
	for i := range n {
		kind, target, size := gatewayv1.Kind("Gateway"), gatewayv1.ObjectName("gw"), v1alpha1.ByteSize("2m")
		if i > 0 {
			kind, target, size = "HTTPRoute", gatewayv1.ObjectName(routeName(i-1)), "4m"
		}
		out = append(out, &v1alpha1.ClientSettingsPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cs-%d", i)},
			Spec: v1alpha1.ClientSettingsPolicySpec{
				TargetRef: gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: kind, Name: target},
				Body:      &v1alpha1.ClientBody{MaxSize: &size},
			},
		})
	}
	return out
}
