package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestTraffic: a Gateway and a route to an echo backend serve 200 through
// real NGINX configured by the real agent; a changed route serves its new
// behaviour; a listener added to the Gateway, and its certificate Secret
// after it, are taken without restarting the data-plane pod (the Service has
// the listener's port before the Secret exists); a deleted route answers 404.
func TestTraffic(t *testing.T) {
	ns := namespace(t, "e2e-traffic")
	gatewayClass(t)
	create(t, gateway(ns, "gw"))
	create(t, echo(ns, "echo-a", 1)...)
	create(t, echo(ns, "echo-b", 1)...)
	route := httpRoute(ns, "app", "gw", "app.example.com", "/", "echo-a")
	create(t, route)
	addr := programmedAddress(t, types.NamespacedName{Namespace: ns, Name: "gw"}, 90*time.Second)

	t.Run("route serves its backend", func(t *testing.T) {
		serves(t, addr, "app.example.com", "/hello", 200, `"pod": "echo-a-`, 60*time.Second)
	})
	t.Run("a listener, then its certificate, are taken without restarting the pod", func(t *testing.T) {
		before := dataPlanePod(t, ns, "gw")
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "gw"}, gw); err != nil {
			t.Fatal(err)
		}
		generation := deploymentGeneration(t, gw)
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{
			Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "late-cert"}}},
		})
		if err := rt.Client.Update(context.Background(), gw); err != nil {
			t.Fatal(err)
		}
		// The listener is reported invalid while its Secret is missing, and
		// the Service has its port already: the Secret will not change it.
		eventually(t, 60*time.Second, func() error {
			if err := listenerCondition(ns, "gw", "https", gatewayv1.ListenerConditionResolvedRefs, metav1.ConditionFalse); err != nil {
				return err
			}
			return servicePort(gw, 443)
		})
		cert := selfSigned(t, "app.example.com")
		create(t, cert.secret(ns, "late-cert"))
		eventually(t, 60*time.Second, func() error { return terminates(addr, cert, ns, "echo-a") })
		serves(t, addr, "app.example.com", "/hello", 200, `"pod": "echo-a-`, 10*time.Second)
		// The reconcile that pushed the configuration serving the new
		// listener applied the data plane's objects before it.
		if g := deploymentGeneration(t, gw); g != generation {
			t.Errorf("the data plane's Deployment went from generation %d to %d: its pods roll out", generation, g)
		}
		after := dataPlanePod(t, ns, "gw")
		if after.UID != before.UID || restarts(after) != restarts(before) {
			t.Errorf("data-plane pod %s (%d restarts) became %s (%d restarts): a listener and its certificate restarted it",
				before.Name, restarts(before), after.Name, restarts(after))
		}
	})
	t.Run("changed route serves the new behaviour", func(t *testing.T) {
		cur := &gatewayv1.HTTPRoute{}
		if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Rules[0].BackendRefs[0].Name = "echo-b"
		cur.Spec.Rules[0].Matches[0].Path.Value = ptr.To("/v2")
		if err := rt.Client.Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
		serves(t, addr, "app.example.com", "/v2/x", 200, `"pod": "echo-b-`, 60*time.Second)
		serves(t, addr, "app.example.com", "/other", 404, "", 30*time.Second)
	})
	t.Run("deleted route answers 404", func(t *testing.T) {
		if err := rt.Client.Delete(context.Background(), route); err != nil {
			t.Fatal(err)
		}
		serves(t, addr, "app.example.com", "/v2/x", 404, "", 60*time.Second)
	})
}

// restarts counts a pod's container restarts.
func restarts(p corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// servicePort checks that a Gateway's data-plane Service has a port.
func servicePort(gw *gatewayv1.Gateway, port int32) error {
	svc := &corev1.Service{}
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: gw.Namespace, Name: provisioner.Name(gw)}, svc); err != nil {
		return err
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return nil
		}
	}
	return fmt.Errorf("the data plane's Service has ports %+v, not %d", svc.Spec.Ports, port)
}

// listenerCondition checks that a Gateway's listener reports a condition
// with a status.
func listenerCondition(ns, gw, listener string, typ gatewayv1.ListenerConditionType, want metav1.ConditionStatus) error {
	g := &gatewayv1.Gateway{}
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: gw}, g); err != nil {
		return err
	}
	for _, l := range g.Status.Listeners {
		if string(l.Name) != listener {
			continue
		}
		if c := meta.FindStatusCondition(l.Conditions, string(typ)); c != nil && c.Status == want {
			return nil
		}
		return fmt.Errorf("listener %s: conditions %+v, want %s %s", listener, l.Conditions, typ, want)
	}
	return fmt.Errorf("no status of listener %s yet", listener)
}

// deploymentGeneration is the generation of a Gateway's data-plane
// Deployment: it moves when the pod template does.
func deploymentGeneration(t *testing.T, gw *gatewayv1.Gateway) int64 {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := rt.Client.Get(context.Background(), types.NamespacedName{Namespace: gw.Namespace, Name: provisioner.Name(gw)}, dep); err != nil {
		t.Fatal(err)
	}
	return dep.Generation
}
