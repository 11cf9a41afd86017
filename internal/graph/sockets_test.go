package graph

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// budgetInput is testInput's Gateway with an NginxProxy of its own: IPv4
// only (a port is one socket; the Gateway's own cleartext ports three,
// with their sniffer's), no metrics (the data plane's own sockets:
// the sinks' 6, the endpoints server's 1 and the readiness server's 1), and workerConnections 64 +
// 8 + sockets: room for that many sockets of listeners and routes. Its listeners replace
// the test Gateway's; ListenerSets from any namespace are allowed.
func budgetInput(sockets int32, listeners []gatewayv1.Listener, objs ...any) *Input {
	in := testInput(objs...)
	in.Add(&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "np"}, Spec: v1alpha2.NginxProxySpec{
		WorkerConnections: ptr.To(ClientConnections + 8 + sockets),
		IPFamily:          ptr.To(v1alpha2.IPFamilyIPv4),
		Metrics:           &v1alpha2.Metrics{Disable: ptr.To(true)},
	}})
	gw := in.Gateways[key("ns", "gw")]
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "np"}}
	gw.Spec.Listeners = listeners
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	return in
}

func listenerOn(name string, port gatewayv1.PortNumber, protocol gatewayv1.ProtocolType) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: protocol}
	if protocol == gatewayv1.TLSProtocolType {
		l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}
	}
	return l
}

func listenerSetAt(ns, name string, created int64, entries ...gatewayv1.ListenerEntry) *gatewayv1.ListenerSet {
	return &gatewayv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Unix(created, 0)},
		Spec:       gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw", Namespace: ptr.To[gatewayv1.Namespace]("ns")}, Listeners: entries},
	}
}

// refusedForSockets lists the listeners refused for the budget, as
// "set/listener" ("gw/listener" for the Gateway's own), in precedence order.
func refusedForSockets(g *Gateway) []string {
	var out []string
	add := func(owner string, ls []*Listener) {
		for _, l := range ls {
			if c := l.Conditions[0]; c.Reason == string(gatewayv1.ListenerReasonPortUnavailable) && strings.Contains(c.Message, "no listening socket is left") {
				out = append(out, owner+"/"+l.Name)
			}
		}
	}
	add("gw", g.Listeners)
	for _, s := range g.ListenerSets {
		add(s.Key.Name, s.Listeners)
	}
	return out
}

// TestSocketBudgetRefusesTheNewestListeners: listeners are admitted in the
// Gateway API's precedence — the Gateway's own in order, then ListenerSets
// from the oldest (then by namespace and name), each in order — and the
// first that does not fit, and every later one needing sockets, are
// refused on their own status; a listener on a port already open costs
// nothing. The others keep working, and the Gateway stays accepted.
func TestSocketBudgetRefusesTheNewestListeners(t *testing.T) {
	http := gatewayv1.HTTPProtocolType
	entry := func(name string, port gatewayv1.PortNumber, host string) gatewayv1.ListenerEntry {
		e := gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(name), Port: port, Protocol: http}
		if host != "" {
			e.Hostname = ptr.To(gatewayv1.Hostname(host))
		}
		return e
	}
	cases := []struct {
		name      string
		sockets   int32
		listeners []gatewayv1.Listener
		sets      []any
		refused   []string
	}{
		{"the Gateway's own, in order", 6, []gatewayv1.Listener{listenerOn("a", 80, http), listenerOn("b", 8080, http), listenerOn("c", 9090, http)}, nil,
			[]string{"gw/c"}},
		{"a listener on an open port costs nothing", 3, []gatewayv1.Listener{listenerOn("a", 80, http)},
			[]any{listenerSetAt("team", "s", 1, entry("same-port", 80, "x.example.com"), entry("own-port", 7070, ""))},
			[]string{"s/own-port"}},
		{"ListenerSets by age, not by name", 4, []gatewayv1.Listener{listenerOn("a", 80, http)},
			[]any{listenerSetAt("team", "a-newer", 2, entry("l", 7070, "")), listenerSetAt("team", "z-older", 1, entry("l", 6060, ""))},
			[]string{"a-newer/l"}},
		{"ListenerSets of one age by namespace and name", 4, []gatewayv1.Listener{listenerOn("a", 80, http)},
			[]any{listenerSetAt("team-b", "s", 1, entry("l", 7070, "")), listenerSetAt("team-a", "s", 1, entry("l", 6060, ""))},
			[]string{"s/l"}}, // team-b's
		{"a TLS port and the socket closing unclaimed connections", 4, []gatewayv1.Listener{listenerOn("http", 80, http), listenerOn("tls", 443, gatewayv1.TLSProtocolType)}, nil,
			[]string{"gw/tls"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := buildTest(t, budgetInput(tc.sockets, tc.listeners, tc.sets...))
			if !g.Valid {
				t.Fatalf("the Gateway is not accepted: %+v", g.Conditions)
			}
			refused := refusedForSockets(g)
			if !reflect.DeepEqual(refused, tc.refused) {
				t.Fatalf("refused %v, want %v", refused, tc.refused)
			}
			if g.ListeningSockets() > int(8+tc.sockets) {
				t.Errorf("%d sockets admitted, the budget has %d", g.ListeningSockets(), 8+tc.sockets)
			}
			for _, l := range g.ValidListeners() {
				if strings.Contains(l.Conditions[0].Message, "socket") {
					t.Errorf("listener %s is configured, and refused: %+v", l.ID, l.Conditions[0])
				}
			}
		})
	}
	// The refused team learns the budget and what to change, nothing of
	// the others' listeners.
	g := buildTest(t, budgetInput(3, []gatewayv1.Listener{listenerOn("a", 80, http)}, listenerSetAt("team", "s", 1, entry("l", 7070, ""))))
	msg := g.ListenerSets[0].Listeners[0].Conditions[0].Message
	for _, want := range []string{"it needs 1", "take 11 of the 11", "workerConnections 75", "raise workerConnections"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
}

// tlsBackend is a Service with one TLS port and a ready endpoint.
func tlsBackend(name string) []any {
	return []any{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "tls", Port: 443}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("tls"), Port: ptr.To[int32](8443)}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.9"}}},
		},
	}
}

func tlsRouteAt(name string, created int64, backend string) *gatewayv1.TLSRoute {
	return &gatewayv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.Unix(created, 0)},
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(name + ".example.com")},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(backend), Port: ptr.To[gatewayv1.PortNumber](443)}}}}},
		},
	}
}

// TestSocketBudgetRefusesTheNewestTLSRoutes: each set of backends a
// TLSRoute passes to takes a socket (shared by the routes with the same
// backends); the oldest routes are admitted first, and the newest that do
// not fit are refused (NoSocketLeft), on their own status only.
func TestSocketBudgetRefusesTheNewestTLSRoutes(t *testing.T) {
	objs := append(append(append(tlsBackend("one"), tlsBackend("two")...), tlsBackend("three")...),
		tlsRouteAt("a-newest", 3, "three"), tlsRouteAt("z-oldest", 1, "one"), tlsRouteAt("m-middle", 2, "two"),
		tlsRouteAt("b-newest-shares", 4, "one"))
	// The TLS port takes 2 (its port, and the closing socket): room for two routes' sockets.
	g := buildTest(t, budgetInput(4, []gatewayv1.Listener{listenerOn("tls", 443, gatewayv1.TLSProtocolType)}, objs...))
	accepted := map[string]bool{}
	for _, r := range g.Routes {
		p := r.Parents[0]
		accepted[r.Key.Name] = p.Attached()
		if c := p.Conditions[0]; !p.Attached() && (c.Reason != string(RouteReasonNoSocketLeft) || !strings.Contains(c.Message, "older routes take 12 of the 12")) {
			t.Errorf("%s refused with %s %q", r.Key.Name, c.Reason, c.Message)
		}
	}
	want := map[string]bool{"z-oldest": true, "m-middle": true, "a-newest": false, "b-newest-shares": true}
	if !reflect.DeepEqual(accepted, want) {
		t.Errorf("accepted %v, want %v", accepted, want)
	}
	if n := g.Listeners[0].AttachedRoutes; n != 3 {
		t.Errorf("the listener counts %d attached routes, want 3", n)
	}
}

// TestSocketBudgetTooSmallForAnyListener: workerConnections that leave no
// socket once the data plane's own and the clients' connections are kept
// refuse the Gateway for its parameters, saying what would do.
func TestSocketBudgetTooSmallForAnyListener(t *testing.T) {
	g := buildTest(t, budgetInput(0, []gatewayv1.Listener{listenerOn("a", 80, gatewayv1.HTTPProtocolType)}))
	c := g.Conditions[0]
	if g.Valid || c.Reason != string(gatewayv1.GatewayReasonInvalidParameters) ||
		!strings.Contains(c.Message, fmt.Sprintf("workerConnections is %d", ClientConnections+8)) || !strings.Contains(c.Message, "the Gateway's NginxProxy ns/np") {
		t.Errorf("Gateway: valid=%v %s %q", g.Valid, c.Reason, c.Message)
	}
}

// TestSocketBudgetRefusesTheNewestH2CRoutes: the first route whose clients
// speak HTTP/2 without TLS (a GRPCRoute) on a ListenerSet's cleartext port
// needs the two sockets of the port's sniffer, later ones nothing (the
// Gateway's own cleartext ports have theirs from the start); the newest
// that does not fit is refused, and the routes before it keep working.
func TestSocketBudgetRefusesTheNewestH2CRoutes(t *testing.T) {
	grpc := func(name string, created int64, parent gatewayv1.ParentReference) *gatewayv1.GRPCRoute {
		return &gatewayv1.GRPCRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.Unix(created, 0)},
			Spec: gatewayv1.GRPCRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}},
				Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: appBackend}}}}},
			},
		}
	}
	set := func(section string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Kind: ptr.To[gatewayv1.Kind](KindListenerSet), Namespace: ptr.To[gatewayv1.Namespace]("team"), Name: "s", SectionName: ptr.To(gatewayv1.SectionName(section))}
	}
	http := gatewayv1.HTTPProtocolType
	entry := func(name string, port gatewayv1.PortNumber) gatewayv1.ListenerEntry {
		return gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(name), Port: port, Protocol: http,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}}
	}
	// The Gateway's port (3), the set's two (2), and room for one sniffer (2).
	g := buildTest(t, budgetInput(7, []gatewayv1.Listener{listenerOn("a", 80, http)},
		listenerSetAt("team", "s", 1, entry("x", 7070), entry("y", 8080)),
		grpc("first-on-x", 1, set("x")), grpc("first-on-y", 2, set("y")), grpc("second-on-x", 3, set("x")),
		grpc("newest-on-the-gateway", 4, gatewayv1.ParentReference{Name: "gw"}),
		testHTTPRoute("plain", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})))
	accepted := map[string]bool{}
	for _, r := range g.Routes {
		accepted[r.Key.Name] = r.Parents[0].Attached()
	}
	want := map[string]bool{"first-on-x": true, "first-on-y": false, "second-on-x": true, "newest-on-the-gateway": true, "plain": true}
	if !reflect.DeepEqual(accepted, want) {
		t.Errorf("accepted %v, want %v", accepted, want)
	}
}

// TestConnectionBudgetRefusesTheNewestL4Listeners: each TCP or UDP
// listener keeps 2 × l4.maxConnections of every worker's connections for
// its clients beside its sockets (a TCP and a UDP listener on one port
// number each their own), admitted in the Gateway API's precedence: the
// listener that does not fit is refused on its own status, saying why,
// and the Gateway, its HTTP listener and the listeners before it stay.
func TestConnectionBudgetRefusesTheNewestL4Listeners(t *testing.T) {
	tcp, udp := gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType
	entry := func(name string, port gatewayv1.PortNumber, protocol gatewayv1.ProtocolType) gatewayv1.ListenerEntry {
		return gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(name), Port: port, Protocol: protocol}
	}
	// The HTTP port (3 sockets, sniffed), tcp (1, and the socket closing
	// unclaimed connections) and udp (1) on one port, with 2 × 10 each:
	// 46 of room for 67; one more listener of 21 fits, not two.
	in := budgetInput(67, []gatewayv1.Listener{listenerOn("http", 80, gatewayv1.HTTPProtocolType), listenerOn("tcp", 5000, tcp), listenerOn("udp", 5000, udp)},
		listenerSetAt("team", "newer", 2, entry("tcp", 6000, tcp)),
		listenerSetAt("team", "older", 1, entry("udp", 6000, udp), entry("tcp", 7000, tcp)))
	in.NginxProxies[key("ns", "np")].Spec.L4 = &v1alpha2.L4Listeners{MaxConnections: ptr.To[int32](10)}
	g := buildTest(t, in)
	if !g.Valid {
		t.Fatalf("the Gateway is not accepted: %+v", g.Conditions)
	}
	var refused []string
	for _, s := range append([]*ListenerSet{{Key: key("ns", "gw"), Listeners: g.Listeners}}, g.ListenerSets...) {
		for _, l := range s.Listeners {
			if c := l.Conditions[0]; c.Reason == string(gatewayv1.ListenerReasonPortUnavailable) {
				refused = append(refused, s.Key.Name+"/"+l.Name)
				for _, want := range []string{"no connections are left for this", "it needs 1 listening sockets and 20 connections", "l4.maxConnections 10", "take 75 of the 75"} {
					if !strings.Contains(c.Message, want) {
						t.Errorf("%s: message %q does not say %q", l.Name, c.Message, want)
					}
				}
			}
		}
	}
	// older's udp fits (the data plane's 8 sockets and 67), its tcp does
	// not, nor newer's.
	if want := []string{"older/tcp", "newer/tcp"}; !reflect.DeepEqual(refused, want) {
		t.Errorf("refused %v, want %v", refused, want)
	}
	if got := g.L4Connections(); got != 3*2*10 {
		t.Errorf("the admitted listeners' clients hold %d connections, want 60", got)
	}

	// Without l4.maxConnections, the TCP and UDP listeners share half of
	// what workerConnections (301) leaves after the 64: 237 / 4 / 2 = 29
	// each, both fit.
	in = budgetInput(229, []gatewayv1.Listener{listenerOn("udp", 5000, udp), listenerOn("tcp", 5000, tcp)})
	g = buildTest(t, in)
	if !g.Listeners[0].Valid || !g.Listeners[1].Valid || g.L4Connections() != 2*2*29 || g.L4MaxConnections() != 29 {
		t.Errorf("with the default, udp valid %v, tcp valid %v, %d connections held, %d each: want both, 116, 29",
			g.Listeners[0].Valid, g.Listeners[1].Valid, g.L4Connections(), g.L4MaxConnections())
	}
	// Six listeners' share would be 4: each gets the least, 16, and the
	// newest that do not fit are refused (the closing socket, then 1 + 32
	// a listener: three fit in 100).
	var six []gatewayv1.Listener
	for i := range 6 {
		six = append(six, listenerOn(fmt.Sprintf("tcp%d", i), gatewayv1.PortNumber(5000+i), tcp))
	}
	g = buildTest(t, budgetInput(100, six))
	var valid []bool
	for _, l := range g.Listeners {
		valid = append(valid, l.Valid)
	}
	if want := []bool{true, true, true, false, false, false}; !reflect.DeepEqual(valid, want) || g.L4MaxConnections() != 16 {
		t.Errorf("six listeners sharing: valid %v (each %d), want %v (16)", valid, g.L4MaxConnections(), want)
	}
}
