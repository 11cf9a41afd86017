package graph

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A Service with port 53 twice, UDP and TCP (as DNS Services have): a
// UDPRoute uses the UDP port and its endpoints, a TCPRoute the TCP one,
// whichever the Service lists first.
func TestDNSLikeServicePortsByTransport(t *testing.T) {
	for _, udpFirst := range []bool{true, false} {
		ports := []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}}
		if !udpFirst {
			ports[0], ports[1] = ports[1], ports[0]
		}
		ref := []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "dns", Port: ptr.To[gatewayv1.PortNumber](53)}}}
		parent := func(section string) gatewayv1.CommonRouteSpec {
			return gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName(section))}}}
		}
		in := testInput(
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dns"}, Spec: corev1.ServiceSpec{Ports: ports}},
			&discoveryv1.EndpointSlice{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dns-1", Labels: map[string]string{discoveryv1.LabelServiceName: "dns"}},
				Ports: []discoveryv1.EndpointPort{{Name: ptr.To("dns"), Port: ptr.To[int32](5353), Protocol: ptr.To(corev1.ProtocolUDP)},
					{Name: ptr.To("dns-tcp"), Port: ptr.To[int32](5354), Protocol: ptr.To(corev1.ProtocolTCP)}},
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.9"}}},
			},
			&gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
				Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: parent("udp"), Rules: []gatewayv1.UDPRouteRule{{BackendRefs: ref}}}},
			&gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t"},
				Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: parent("tcp"), Rules: []gatewayv1.TCPRouteRule{{BackendRefs: ref}}}},
		)
		gw := in.Gateways[key("ns", "gw")]
		gw.Spec.Listeners = append(gw.Spec.Listeners,
			gatewayv1.Listener{Name: "udp", Port: 53, Protocol: gatewayv1.UDPProtocolType},
			gatewayv1.Listener{Name: "tcp", Port: 53, Protocol: gatewayv1.TCPProtocolType})
		g := buildTest(t, in)
		want := map[string]struct {
			proto string
			port  int32
		}{KindUDPRoute: {ProtocolUDP, 5353}, KindTCPRoute: {ProtocolTCP, 5354}}
		for _, r := range g.Routes {
			w := want[r.Kind]
			if len(r.Rules) != 1 || len(r.Rules[0].Backends) != 1 {
				t.Fatalf("%s: rules %+v", r.Kind, r.Rules)
			}
			b := r.Rules[0].Backends[0]
			if !b.Valid || b.Protocol != w.proto || len(b.Endpoints) != 1 || b.Endpoints[0].Port != w.port {
				t.Errorf("UDP port listed first %v: %s backend valid %v protocol %q endpoints %+v (%s); want %s to port %d",
					udpFirst, r.Kind, b.Valid, b.Protocol, b.Endpoints, b.Err, w.proto, w.port)
			}
			if !r.Parents[0].Attached() || !r.Parents[0].Attachments[0].Serves() {
				t.Errorf("%s does not serve its listener: %+v", r.Kind, r.Parents[0].Conditions)
			}
		}
		for _, l := range g.Listeners {
			if !l.Valid {
				t.Errorf("listener %s (port %d %s) is not valid: %+v", l.Name, l.Source.Port, l.Source.Protocol, l.Conditions)
			}
		}
	}
}
