package config_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// The worst names a tenant can make Gatewall render: the naming function
// (names.go) gives a generated name a short digest, and the whole SHA-256
// digest when the short one is taken, which inputs crafted for a 48-bit
// collision make happen; hostnames reach 253 characters. Every hash table
// NGINX builds from them (variables, maps, server names; in http and in
// stream) must be sized so that NGINX neither fails nor warns.

// l4Shape is a tenant's share of a Gateway: a ListenerSet of TCP and UDP
// listeners, each served by a route splitting its connections between two
// Services of the tenant's own.
type l4Shape struct {
	ns       string
	tcp, udp int
	// firstPort is the tenant's first port; its TCP and UDP listeners share
	// port numbers.
	firstPort int32
}

// l4Objects are the tenant's namespace's ListenerSet, routes and Services.
func (s l4Shape) objects(r *rand.Rand) []any {
	var listeners []gatewayv1.ListenerEntry
	var objs []any
	for i := range max(s.tcp, s.udp) {
		port := gatewayv1.PortNumber(s.firstPort) + gatewayv1.PortNumber(i)
		for _, proto := range []struct {
			n        int
			protocol gatewayv1.ProtocolType
			svc      corev1.Protocol
		}{{s.tcp, gatewayv1.TCPProtocolType, corev1.ProtocolTCP}, {s.udp, gatewayv1.UDPProtocolType, corev1.ProtocolUDP}} {
			if i >= proto.n {
				continue
			}
			name := fmt.Sprintf("%s-%d", strings.ToLower(string(proto.protocol)), i)
			listeners = append(listeners, gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(name), Port: port, Protocol: proto.protocol})
			var refs []gatewayv1.BackendRef
			for b := range 2 {
				svc := fmt.Sprintf("%s-%d", name, b)
				objs = append(objs, l4Service(s.ns, svc, proto.svc, fmt.Sprintf("10.%d.%d.%d", 1+r.IntN(200), i%250, 1+b))...)
				refs = append(refs, gatewayv1.BackendRef{Weight: ptr.To(int32(1 + r.IntN(100))),
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](53)}})
			}
			spec := gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{
				Group: ptr.To[gatewayv1.Group](gatewayv1.GroupName), Kind: ptr.To[gatewayv1.Kind]("ListenerSet"),
				Name: "tenant", SectionName: ptr.To(gatewayv1.SectionName(name))}}}
			meta := metav1.ObjectMeta{Namespace: s.ns, Name: name}
			if proto.protocol == gatewayv1.TCPProtocolType {
				objs = append(objs, &gatewayv1.TCPRoute{ObjectMeta: meta, Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: spec, Rules: []gatewayv1.TCPRouteRule{{BackendRefs: refs}}}})
			} else {
				objs = append(objs, &gatewayv1.UDPRoute{ObjectMeta: meta, Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: spec, Rules: []gatewayv1.UDPRouteRule{{BackendRefs: refs}}}})
			}
		}
	}
	objs = append(objs, &gatewayv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "tenant"},
		Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Name: gatewayv1.ObjectName(testGateway.Name), Namespace: ptr.To(gatewayv1.Namespace(testGateway.Namespace))},
			Listeners: listeners,
		},
	})
	return objs
}

// l4Service is a Service with port 53 of protocol proto and one endpoint at addr.
func l4Service(ns, name string, proto corev1.Protocol, addr string) []any {
	return []any{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "p", Port: 53, Protocol: proto}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("p"), Port: ptr.To[int32](5353), Protocol: ptr.To(proto)}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{addr}}},
		},
	}
}

// worstShape is a Gateway of the shapes whose names reach hash tables.
type worstShape struct {
	name string
	// tenants are ListenerSets of weighted TCP and UDP listeners.
	tenants []l4Shape
	// tlsRoutes are weighted TLSRoutes on a passthrough listener; hostLen
	// is the length of their hostnames (0: short ones).
	tlsRoutes, hostLen int
	// grpc adds a GRPCRoute on the cleartext port (the stream sniffer's
	// variable); conditions, HTTPRoutes matched by a header each.
	grpc       bool
	conditions int
	// hashed are HTTPRoutes to Services of their own whose upstreams
	// balance by a hash of a key (UpstreamSettingsPolicy): a map and its
	// variable each, in upstreams.conf.
	hashed int
}

// includes are the policies' settings of the shape: the hashed Services'.
func (s worstShape) includes() config.Includes {
	inc := config.Includes{Upstreams: map[types.NamespacedName]*config.UpstreamSettings{}}
	for i := range s.hashed {
		inc.Upstreams[types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("hashed-%04d", i)}] = &config.UpstreamSettings{Method: []string{"hash", "$request_uri"}}
	}
	return inc
}

func (s worstShape) input(t *testing.T, r *rand.Rand) *graph.Input {
	t.Helper()
	var objs []any
	if s.tlsRoutes > 0 {
		objs = append(objs, service("ns", "other", 80, "10.0.0.2")...)
		for i := range s.tlsRoutes {
			host := fmt.Sprintf("w%04d.pass.example.com", i)
			if s.hostLen > 0 {
				host = longHost(s.hostLen)[:s.hostLen-len(".pass.example.com")-5] + fmt.Sprintf("%05d", i) + ".pass.example.com"
			}
			objs = append(objs, &gatewayv1.TLSRoute{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("w-%04d", i)},
				Spec: gatewayv1.TLSRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To[gatewayv1.SectionName]("pass")}}},
					Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
					Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{
						{BackendObjectReference: appRef[0].BackendObjectReference, Weight: ptr.To(int32(1 + r.IntN(1000)))},
						{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "other", Port: ptr.To[gatewayv1.PortNumber](80)}, Weight: ptr.To(int32(1 + r.IntN(1000)))},
					}}},
				},
			})
		}
	}
	if s.grpc {
		objs = append(objs, grpcRegexRoute("grpc", "^svc[0-9]+$"))
	}
	objs = append(objs, conditionRoutes(s.conditions)...)
	for i := range s.hashed {
		svc := fmt.Sprintf("hashed-%04d", i)
		objs = append(objs, service("ns", svc, 80, fmt.Sprintf("10.1.%d.%d", i/250, 1+i%250))...)
		objs = append(objs, httpRoute(svc, []gatewayv1.Hostname{gatewayv1.Hostname(svc + ".example.com")}, gatewayv1.HTTPRouteRule{
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}}}))
	}
	for _, tenant := range s.tenants {
		objs = append(objs, tenant.objects(r)...)
	}
	in := httpInput(objs...)
	gw := in.Gateways[testGateway]
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	if s.tlsRoutes > 0 {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
			Hostname: ptr.To[gatewayv1.Hostname]("*.pass.example.com"), TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	}
	// Room for every listener's sockets and connections.
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "np"}, Spec: v1alpha2.NginxProxySpec{WorkerConnections: ptr.To[int32](65535)}}
	in.Add(np)
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: np.Name}}
	return in
}

// TestWorstNamesPassNginx renders Gateways of the shapes whose generated
// names reach NGINX's hash tables (weighted TCP, UDP and TLS routes, the
// sniffer, condition maps, the longest hostnames), each with the names
// the naming function gives without collisions and with every short
// digest colliding (the whole digest in every name but one), fixed worst
// cases and random mixes, and runs real `nginx -t` on all of them: NGINX
// must accept each and log no warning ("could not build optimal
// variables_hash" on every reload, or a failure for the whole Gateway).
func TestWorstNamesPassNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	shapes := []worstShape{
		// The tenant of issue 39: its own ListenerSet, two TCP listeners,
		// two weighted routes.
		{name: "a tenant's two weighted TCP listeners", tenants: []l4Shape{{ns: "tenant", tcp: 2, firstPort: 5000}}},
		{name: "64 weighted TCP and UDP listeners", tenants: []l4Shape{{ns: "tenant", tcp: 32, udp: 32, firstPort: 5000}}},
		{name: "256 weighted TCP and UDP listeners of four tenants", tenants: []l4Shape{
			{ns: "t1", tcp: 32, udp: 32, firstPort: 5000}, {ns: "t2", tcp: 32, udp: 32, firstPort: 6000},
			{ns: "t3", tcp: 32, udp: 32, firstPort: 7000}, {ns: "t4", tcp: 32, udp: 32, firstPort: 8000}}},
		{name: "400 weighted TLSRoutes", tlsRoutes: 400},
		{name: "64 weighted TLSRoutes of 253-character hostnames", tlsRoutes: 64, hostLen: 253},
		{name: "600 Services balanced by a hash", hashed: 600},
		{name: "everything", hashed: 50, tlsRoutes: 100, hostLen: 120, grpc: true, conditions: 300,
			tenants: []l4Shape{{ns: "t1", tcp: 20, udp: 20, firstPort: 5000}, {ns: "t2", tcp: 40, udp: 10, firstPort: 6000}}},
	}
	r := rand.New(rand.NewPCG(39, 4))
	for i := range 8 {
		s := worstShape{name: fmt.Sprintf("random mix %d", i), grpc: r.IntN(2) == 0, conditions: r.IntN(3) * r.IntN(400), hashed: r.IntN(2) * r.IntN(400)}
		if r.IntN(2) == 0 {
			s.tlsRoutes, s.hostLen = 1+r.IntN(300), []int{0, 60, 253}[r.IntN(3)]
		}
		for j := range r.IntN(4) {
			s.tenants = append(s.tenants, l4Shape{ns: fmt.Sprintf("t%d", j), tcp: r.IntN(33), udp: r.IntN(33), firstPort: int32(5000 + 1000*j)})
		}
		shapes = append(shapes, s)
	}
	var names []string
	var configs [][]config.File
	for _, s := range shapes {
		g := graph.Build(s.input(t, r), testGateway)
		checkEveryListenerServes(t, s.name, g)
		for _, colliding := range []bool{false, true} {
			cfg := config.Build(g, s.includes())
			name := s.name
			if colliding {
				cfg = config.BuildWithCollidingDigests(g, s.includes())
				name += ", colliding digests"
			}
			names = append(names, name)
			configs = append(configs, cfg.Files())
		}
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if ws := nginxtest.Warnings(res.Output); !res.OK || len(ws) > 0 {
			t.Errorf("%s: nginx -t accepted it: %v; it says:\n%s", names[i], res.OK, strings.Join(ws, "\n"))
		}
	}
}

// checkEveryListenerServes: the shape is what the test means to render:
// every listener and route is accepted.
func checkEveryListenerServes(t *testing.T, what string, g *graph.Gateway) {
	t.Helper()
	if g == nil || !g.Valid {
		t.Fatalf("%s: the Gateway is not valid", what)
	}
	for _, l := range g.Listeners {
		if !l.Valid {
			t.Fatalf("%s: listener %s is not valid: %+v", what, l.Name, l.Conditions)
		}
	}
	for _, set := range g.ListenerSets {
		for _, l := range set.Listeners {
			if !l.Valid {
				t.Fatalf("%s: listener %s of %s is not valid: %+v", what, l.Name, set.Key, l.Conditions)
			}
		}
	}
	for _, rt := range g.Routes {
		for _, p := range rt.Parents {
			if !p.Attached() {
				t.Fatalf("%s: route %s %s is not attached: %+v", what, rt.Kind, rt.Key, p.Conditions)
			}
		}
	}
}
