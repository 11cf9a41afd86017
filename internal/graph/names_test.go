package graph

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestInvalidRouteNamesAreRefused: names reach file names and nginx.conf;
// a route whose name the API server would refuse (an object that bypassed
// it, or a manifest given to the offline renderer) is not accepted.
func TestInvalidRouteNamesAreRefused(t *testing.T) {
	for _, name := range []string{"zzr;evil", "../../etc/x", "UPPER", strings.Repeat("a", 254)} {
		t.Run(name[:min(len(name), 12)], func(t *testing.T) {
			g := buildTest(t, testInput(testHTTPRoute(name, gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})))
			p := g.Routes[0].Parents[0]
			if p.Attached() || p.Conditions[0].Status != metav1.ConditionFalse || !strings.Contains(p.Conditions[0].Message, "is not a valid object name") {
				t.Fatalf("route %q: attached=%v, %+v", name, p.Attached(), p.Conditions[0])
			}
		})
	}
}

// TestInvalidListenerSetNamesAreRefused: a ListenerSet's name reaches
// nginx.conf through its listeners' IDs.
func TestInvalidListenerSetNamesAreRefused(t *testing.T) {
	g := buildTest(t, listenerSetInput("set;evil", 8080))
	s := g.ListenerSets[0]
	if s.Accepted || s.Conditions[0].Reason != string(gatewayv1.ListenerSetReasonInvalid) || len(g.ValidListeners()) != 1 {
		t.Fatalf("ListenerSet with an invalid name: accepted=%v %+v", s.Accepted, s.Conditions)
	}
}

// TestListenerPortRange: listener ports outside 1-65535 are refused (NGINX
// rejects "listen 0"); the Gateway's other listeners keep working.
func TestListenerPortRange(t *testing.T) {
	in := testInput()
	gw := in.Gateways[key("ns", "gw")]
	gw.Spec.Listeners = append(gw.Spec.Listeners,
		gatewayv1.Listener{Name: "zero", Port: 0, Protocol: gatewayv1.HTTPProtocolType},
		gatewayv1.Listener{Name: "big", Port: 70000, Protocol: gatewayv1.HTTPProtocolType},
		gatewayv1.Listener{Name: "max", Port: 65535, Protocol: gatewayv1.HTTPProtocolType})
	g := buildTest(t, in)
	var valid []string
	for _, l := range g.ValidListeners() {
		valid = append(valid, l.Name)
	}
	if !reflect.DeepEqual(valid, []string{"http", "max"}) || !g.Valid {
		t.Fatalf("valid listeners %v, want http and max", valid)
	}
	for _, l := range g.Listeners[1:3] {
		if c := l.Conditions[0]; c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "is not between 1 and 65535") {
			t.Errorf("listener %s: %+v", l.Name, c)
		}
	}
}

// TestBackendPortRange: a backendRef's port must be 1-65535.
func TestBackendPortRange(t *testing.T) {
	in := testInput()
	in.Services[key("ns", "app")].Spec.Ports = append(in.Services[key("ns", "app")].Spec.Ports, corev1.ServicePort{Name: "zero", Port: 0})
	b, reason := resolveBackend(in, KindHTTPRoute, "ns", gatewayv1.BackendObjectReference{Name: "app", Port: ptr.To[gatewayv1.PortNumber](0)}, nil)
	if b.Valid || reason != gatewayv1.RouteReasonUnsupportedValue || !strings.Contains(b.Err, "port 0 is not between 1 and 65535") {
		t.Fatalf("port 0: valid=%v %s %s", b.Valid, reason, b.Err)
	}
}

// TestBackendPortProtocol: NGINX proxies to TCP ports only.
func TestBackendPortProtocol(t *testing.T) {
	in := testInput()
	in.Services[key("ns", "app")].Spec.Ports[0].Protocol = corev1.ProtocolUDP
	b, reason := resolveBackend(in, KindHTTPRoute, "ns", appBackend, nil)
	if b.Valid || reason != gatewayv1.RouteReasonUnsupportedProtocol || !strings.Contains(b.Err, `port 80 is "UDP"`) {
		t.Fatalf("UDP port: valid=%v %s %s", b.Valid, reason, b.Err)
	}
}

// TestBackendWeightRange: a backendRef's weight must be 0-1000000.
func TestBackendWeightRange(t *testing.T) {
	in := testInput()
	for _, w := range []int32{-1, 1000001} {
		b, _ := resolveBackend(in, KindHTTPRoute, "ns", appBackend, &w)
		if b.Valid || b.Weight != 0 || !strings.Contains(b.Err, "is not between 0 and 1000000") {
			t.Errorf("weight %d: valid=%v weight=%d %s", w, b.Valid, b.Weight, b.Err)
		}
	}
	if b, _ := resolveBackend(in, KindHTTPRoute, "ns", appBackend, ptr.To[int32](1000000)); !b.Valid {
		t.Errorf("weight 1000000: %s", b.Err)
	}
}

// TestInvalidGatewayNamesAreRefused: a Gateway's name reaches the data
// plane's object names and the offline renderer's paths.
func TestInvalidGatewayNamesAreRefused(t *testing.T) {
	for _, name := range []string{"gw;evil", "../gw", "GW"} {
		in := testInput()
		gw := in.Gateways[key("ns", "gw")]
		delete(in.Gateways, key("ns", "gw"))
		gw.Name = name
		in.Gateways[key("ns", name)] = gw
		g := Build(in, key("ns", name))
		if g == nil || g.Valid || !strings.Contains(g.Conditions[0].Message, "is not a valid object name") {
			t.Fatalf("Gateway %q: %+v", name, g)
		}
	}
}

// listenerSetInput is testInput with ListenerSet ns/name, allowed by the
// Gateway, adding an HTTP listener "extra" on port.
func listenerSetInput(name string, port gatewayv1.PortNumber) *Input {
	in := testInput(&gatewayv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw"},
			Listeners: []gatewayv1.ListenerEntry{{Name: "extra", Port: port, Protocol: gatewayv1.HTTPProtocolType}}},
	})
	gw := in.Gateways[key("ns", "gw")]
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	return in
}
