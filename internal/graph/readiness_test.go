package graph

import (
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestReadinessPortTakesNoListenersPort: the readiness port is 8081 unless
// a listener (valid or not) or the data plane's own servers use it; then
// the next free port, so a user's listener never loses its port to it.
func TestReadinessPortTakesNoListenersPort(t *testing.T) {
	http := func(name string, port gatewayv1.PortNumber) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: gatewayv1.HTTPProtocolType}
	}
	cases := []struct {
		name      string
		np        *v1alpha2.NginxProxySpec
		listeners []gatewayv1.Listener
		want      int32
	}{
		{"no listener there", nil, nil, 8081},
		{"a listener on 8081", nil, []gatewayv1.Listener{http("a", 8081)}, 8082},
		{"listeners on 8082 and 8081", nil, []gatewayv1.Listener{http("a", 8082), http("b", 8081)}, 8083},
		{"metrics on 8081", &v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(8081))}}, nil, 8082},
		{"a listener Gatewall refuses on 8081", nil, []gatewayv1.Listener{{Name: "udp", Port: 8081, Protocol: gatewayv1.UDPProtocolType}}, 8082},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := overlayInput(nil, tc.np)
			gw := in.Gateways[key("default", "gw")]
			gw.Spec.Listeners = append(gw.Spec.Listeners, tc.listeners...)
			g := Build(in, key("default", "gw"))
			for _, l := range g.Listeners {
				if l.Source.Protocol == gatewayv1.UDPProtocolType && l.Valid {
					t.Fatal("the UDP listener is valid: the case tests nothing")
				}
			}
			if got := g.ReadinessPort(); got != tc.want {
				t.Errorf("readiness port %d, want %d", got, tc.want)
			}
		})
	}
}

// TestReadinessPortSkipsListenerSetPorts: a ListenerSet's listener keeps its
// port from the readiness port as the Gateway's own do.
func TestReadinessPortSkipsListenerSetPorts(t *testing.T) {
	g := buildTest(t, listenerSetInput("set", 8081))
	if len(g.ListenerSets) != 1 || !g.ListenerSets[0].Accepted {
		t.Fatalf("the ListenerSet is not accepted: the case tests nothing")
	}
	if got := g.ReadinessPort(); got != 8082 {
		t.Errorf("readiness port %d with a ListenerSet listener on 8081, want 8082", got)
	}
}
