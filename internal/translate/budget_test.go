package translate_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// tenantsOverBudget is baseInput's Gateway (workerConnections 1024, the
// default), shared: it allows ListenerSets and has a TLS passthrough
// listener, and tenants add what exhausts its listening sockets.
func tenantsOverBudget(add func(in *graph.Input)) *graph.Input {
	in := baseInput()
	gw := in.Gateways[types.NamespacedName{Namespace: "default", Name: "gw"}]
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}, AllowedRoutes: &gatewayv1.AllowedRoutes{
			Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}})
	add(in)
	return in
}

// manyTLSRoutes: 1,100 TLSRoutes in namespace tenant, each to a Service of
// its own (so each needs a socket), created one second apart.
func manyTLSRoutes(in *graph.Input) {
	for i := range 1100 {
		name := fmt.Sprintf("t%04d", i)
		in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tls", Port: 443}}}})
		in.Add(&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("tls"), Port: ptr.To[int32](8443)}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{fmt.Sprintf("10.1.%d.%d", i/200, i%200+1)}}},
		})
		in.Add(&gatewayv1.TLSRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: name, CreationTimestamp: metav1.Unix(int64(i), 0)},
			Spec: gatewayv1.TLSRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To[gatewayv1.Namespace]("default")}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(name + ".pass.example.com")},
				Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: gatewayv1.ObjectName(name), Port: ptr.To[gatewayv1.PortNumber](443)}}}}},
			},
		})
	}
}

// manyListenerSets: 600 ListenerSets of namespace tenant, each with a
// listener on a port of its own, created one second apart.
func manyListenerSets(in *graph.Input) {
	for i := range 600 {
		in.Add(&gatewayv1.ListenerSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: fmt.Sprintf("s%03d", i), CreationTimestamp: metav1.Unix(int64(i), 0)},
			Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw", Namespace: ptr.To[gatewayv1.Namespace]("default")},
				Listeners: []gatewayv1.ListenerEntry{{Name: "l", Port: gatewayv1.PortNumber(20000 + i), Protocol: gatewayv1.HTTPProtocolType}}},
		})
	}
}

// TestTenantsOverBudgetAreRefusedAlone: one namespace's TLSRoutes or
// ListenerSets that need more listening sockets than workerConnections
// allows used to get the whole shared Gateway refused (InvalidParameters,
// its configuration frozen for every team). Now the Gateway stays
// accepted, the other teams' routes keep their configuration, the oldest
// of the tenant's objects are served and the newest refused on their own
// status; and NGINX accepts the configuration.
func TestTenantsOverBudgetAreRefusedAlone(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		add  func(in *graph.Input)
		// refused counts the tenant's objects refused, and says which
		// (the newest) must be.
		refused func(t *testing.T, g *graph.Gateway) (refused int, newest bool)
	}{
		{"1,100 TLSRoutes", manyTLSRoutes, func(t *testing.T, g *graph.Gateway) (int, bool) {
			n, newest := 0, false
			for _, r := range g.Routes {
				if r.Kind != graph.KindTLSRoute || r.Parents[0].Attached() {
					continue
				}
				n++
				newest = newest || r.Key.Name == "t1099"
				if c := r.Parents[0].Conditions[0]; c.Reason != "NoSocketLeft" || !strings.Contains(c.Message, "workerConnections 1024") {
					t.Errorf("TLSRoute %s: %s %q", r.Key, c.Reason, c.Message)
				}
			}
			return n, newest
		}},
		{"600 ListenerSets", manyListenerSets, func(t *testing.T, g *graph.Gateway) (int, bool) {
			n, newest := 0, false
			for _, s := range g.ListenerSets {
				l := s.Listeners[0]
				if l.Valid {
					continue
				}
				n++
				newest = newest || s.Key.Name == "s599"
				if c := l.Conditions[0]; c.Reason != string(gatewayv1.ListenerReasonPortUnavailable) || !strings.Contains(c.Message, "workerConnections 1024") {
					t.Errorf("ListenerSet %s: %s %q", s.Key, c.Reason, c.Message)
				}
			}
			return n, newest
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := translate.Gateway(tenantsOverBudget(c.add), types.NamespacedName{Namespace: "default", Name: "gw"})
			g := tr.Graph
			if !g.Valid || tr.Files == nil {
				t.Fatalf("the shared Gateway is refused: %+v", g.Conditions)
			}
			for _, r := range g.Routes {
				if r.Key.Namespace == "default" && !r.Parents[0].Attached() {
					t.Errorf("another team's %s %s lost its attachment: %+v", r.Kind, r.Key, r.Parents[0].Conditions)
				}
			}
			n, newest := c.refused(t, g)
			if n == 0 || !newest {
				t.Errorf("%d of the tenant's objects refused, the newest among them: %v", n, newest)
			}
			if out, err := nginxtest.Test(tr.Files); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%d of the tenant's objects refused", n)
		})
	}
}
