package graph

import (
	"reflect"
	"strings"
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
		{"a listener Gatewall refuses on 8081", nil, []gatewayv1.Listener{{Name: "sctp", Port: 8081, Protocol: "SCTP"}}, 8082},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := overlayInput(nil, tc.np)
			gw := in.Gateways[key("default", "gw")]
			gw.Spec.Listeners = append(gw.Spec.Listeners, tc.listeners...)
			g := Build(in, key("default", "gw"))
			for _, l := range g.Listeners {
				if l.Source.Protocol == "SCTP" && l.Valid {
					t.Fatal("the SCTP listener is valid: the case tests nothing")
				}
			}
			if got := g.ReadinessPort(); got != tc.want {
				t.Errorf("readiness port %d, want %d", got, tc.want)
			}
		})
	}
}

// TestListenerSetsCannotMoveTheReadinessPort: the readiness port is in the
// pods' template, so moving it rolls every pod of the Gateway; a tenant's
// ListenerSet must not be able to. Only the Gateway's own listeners move
// it; a ListenerSet listener on it, valid or not, is refused, naming the
// readiness probe, and the set's other listeners keep working.
func TestListenerSetsCannotMoveTheReadinessPort(t *testing.T) {
	entry := func(name string, port gatewayv1.PortNumber, protocol gatewayv1.ProtocolType) gatewayv1.ListenerEntry {
		return gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(name), Port: port, Protocol: protocol}
	}
	cases := []struct {
		name    string
		own     []gatewayv1.Listener
		entries []gatewayv1.ListenerEntry
		want    int32
		refused []string
		// reason is the refused listener's; an invalid one keeps its own.
		reason gatewayv1.ListenerEntryConditionReason
	}{
		{"a valid listener on 8081", nil, []gatewayv1.ListenerEntry{entry("on", 8081, gatewayv1.HTTPProtocolType), entry("off", 9000, gatewayv1.HTTPProtocolType)},
			8081, []string{"on"}, gatewayv1.ListenerEntryReasonPortUnavailable},
		{"an invalid listener on 8081", nil, []gatewayv1.ListenerEntry{entry("sctp", 8081, "SCTP"), entry("off", 9000, gatewayv1.HTTPProtocolType)},
			8081, []string{"sctp"}, gatewayv1.ListenerEntryReasonUnsupportedProtocol},
		{"the Gateway moved it to 8082", []gatewayv1.Listener{{Name: "own", Port: 8081, Protocol: gatewayv1.HTTPProtocolType}},
			[]gatewayv1.ListenerEntry{withHostname(entry("shares", 8081, gatewayv1.HTTPProtocolType), "a.example.com"), entry("on", 8082, gatewayv1.HTTPProtocolType)},
			8082, []string{"on"}, gatewayv1.ListenerEntryReasonPortUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := listenerSetInput("set", 9999)
			in.ListenerSets[key("ns", "set")].Spec.Listeners = tc.entries
			gw := in.Gateways[key("ns", "gw")]
			gw.Spec.Listeners = append(gw.Spec.Listeners, tc.own...)
			g := buildTest(t, in)
			if got := g.ReadinessPort(); got != tc.want {
				t.Errorf("readiness port %d, want %d", got, tc.want)
			}
			s := g.ListenerSets[0]
			if !s.Accepted {
				t.Fatalf("the ListenerSet is not accepted: %+v", s.Conditions)
			}
			var refused []string
			for _, l := range s.Listeners {
				if l.Attachable {
					continue
				}
				refused = append(refused, l.Name)
				c := l.Conditions[0]
				if c.Reason != string(tc.reason) || tc.reason == gatewayv1.ListenerEntryReasonPortUnavailable && !strings.Contains(c.Message, "readiness probe") {
					t.Errorf("listener %s: %+v, want %s (naming the readiness probe)", l.Name, c, tc.reason)
				}
			}
			if !reflect.DeepEqual(refused, tc.refused) {
				t.Errorf("refused %v, want %v", refused, tc.refused)
			}
		})
	}
}

func withHostname(e gatewayv1.ListenerEntry, h gatewayv1.Hostname) gatewayv1.ListenerEntry {
	e.Hostname = &h
	return e
}
