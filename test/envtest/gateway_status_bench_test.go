package envtest

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkGatewayStatusWrite times one status update of a Gateway with 1,
// 16 and 64 HTTPS listeners on the real API server, with the Gateway API's
// standard CRDs. The API server checks the whole object's CEL rules on a
// status write too, and two of the Gateway's compare every listener with
// every other, so a write's cost grows with the square of the listeners:
// why Gatewall spaces a Gateway's status jobs by what the last one took
// (internal/controller, gatewayStatusPace).
func BenchmarkGatewayStatusWrite(b *testing.B) {
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("listeners=%d", n), func(b *testing.B) {
			ctx := context.Background()
			gw := listenersGateway(fmt.Sprintf("status-bench-%d", n), n)
			if err := env.Client.Create(ctx, gw); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = env.Client.Delete(ctx, gw) })
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				gw.Status.Listeners = listenerStatuses(n, int32(i))
				if err := env.Client.Status().Update(ctx, gw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// listenersGateway is a Gateway with n HTTPS listeners on port 443, each
// for its own hostname and certificate.
func listenersGateway(name string, n int) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx"}}
	for i := 0; i < n; i++ {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{
			Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			Hostname: ptr.To(gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i))),
			TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModeTerminate),
				CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(fmt.Sprintf("cert-%d", i))}}},
		})
	}
	return gw
}

// listenerStatuses are n listeners' statuses as Gatewall writes them, with
// attached routes counted as attached.
func listenerStatuses(n int, attached int32) []gatewayv1.ListenerStatus {
	now := metav1.Now()
	var out []gatewayv1.ListenerStatus
	for i := 0; i < n; i++ {
		var conds []metav1.Condition
		for _, c := range [][3]string{{"Accepted", "True", "Accepted"}, {"Conflicted", "False", "NoConflicts"}, {"Programmed", "True", "Programmed"}, {"ResolvedRefs", "True", "ResolvedRefs"}} {
			conds = append(conds, metav1.Condition{Type: c[0], Status: metav1.ConditionStatus(c[1]), Reason: c[2], ObservedGeneration: 1, LastTransitionTime: now})
		}
		out = append(out, gatewayv1.ListenerStatus{
			Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), AttachedRoutes: attached, Conditions: conds,
			SupportedKinds: []gatewayv1.RouteGroupKind{{Kind: "HTTPRoute"}, {Kind: "GRPCRoute"}},
		})
	}
	return out
}
