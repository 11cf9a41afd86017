package config_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/pki/issuer"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// budgetShapes draws a Gateway of every shape that opens sockets: its own
// listeners and ListenerSets' on shared and separate ports (HTTP, HTTPS,
// TLS passthrough and terminating, with and without tls.options), HTTPRoutes (weighted, to missing and
// empty Services, mirrored, to h2c backends), GRPCRoutes and TLSRoutes on
// any of them, either IP family or both, metrics on or off, and few
// workerConnections, so that the budget refuses some of them.
func budgetShapes(r *rand.Rand, cert *corev1.Secret) *graph.Input {
	in := httpInput()
	in.Add(cert)
	for _, name := range []string{"b", "c"} {
		for _, o := range service("ns", name, 80, fmt.Sprintf("10.0.1.%d", len(name))) {
			in.Add(o)
		}
	}
	in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "empty"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "p", Port: 80}}}})
	in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h2"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "p", Port: 80, AppProtocol: ptr.To("kubernetes.io/h2c")}}}})
	in.Add(&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h2", Labels: map[string]string{discoveryv1.LabelServiceName: "h2"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("p"), Port: ptr.To[int32](8080), AppProtocol: ptr.To("kubernetes.io/h2c")}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.1.9"}}},
	})
	np := v1alpha2.NginxProxySpec{WorkerConnections: ptr.To(int32(72 + r.IntN(40))), L4: &v1alpha2.L4Listeners{MaxConnections: ptr.To(int32(1 + r.IntN(8)))}}
	np.IPFamily = ptr.To([]v1alpha2.IPFamily{v1alpha2.IPFamilyDual, v1alpha2.IPFamilyIPv4, v1alpha2.IPFamilyIPv6}[r.IntN(3)])
	if r.IntN(2) == 0 {
		np.Metrics = &v1alpha2.Metrics{Disable: ptr.To(true)}
	}
	in.Add(&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "np"}, Spec: np})

	ports := []gatewayv1.PortNumber{80, 443, 8080, 8443, 9000}
	all := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	listener := func(i int) gatewayv1.Listener {
		l := gatewayv1.Listener{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), Port: ports[r.IntN(len(ports))], AllowedRoutes: all}
		if r.IntN(2) == 0 {
			l.Hostname = ptr.To(gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", r.IntN(4))))
		}
		certs := []gatewayv1.SecretObjectReference{{Name: "cert"}}
		switch r.IntN(6) {
		case 4:
			l.Protocol, l.Hostname = gatewayv1.TCPProtocolType, nil
		case 5:
			l.Protocol, l.Hostname = gatewayv1.UDPProtocolType, nil
		case 0:
			l.Protocol = gatewayv1.HTTPProtocolType
		case 1:
			l.Protocol, l.TLS = gatewayv1.HTTPSProtocolType, &gatewayv1.ListenerTLSConfig{CertificateRefs: certs}
		case 2:
			l.Protocol, l.TLS = gatewayv1.TLSProtocolType, &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}
		default:
			l.Protocol, l.TLS = gatewayv1.TLSProtocolType, &gatewayv1.ListenerTLSConfig{CertificateRefs: certs}
			// Options tell terminating servers apart (Listener.PassKey).
			switch r.IntN(3) {
			case 1:
				l.TLS.Options = map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"nginx.org/ssl-protocols": "TLSv1.3"}
			case 2:
				l.TLS.Options = map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"nginx.org/ssl-session-cache": "32k"}
			}
		}
		return l
	}
	gw := in.Gateways[testGateway]
	gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
		Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "np"}}
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	gw.Spec.Listeners = nil
	for i := range 1 + r.IntN(4) {
		gw.Spec.Listeners = append(gw.Spec.Listeners, listener(i))
	}
	parents := []gatewayv1.ParentReference{{Name: "gw"}}
	for s := range r.IntN(3) {
		ls := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("s%d", s), CreationTimestamp: metav1.Unix(int64(r.IntN(3)), 0)},
			Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw"}}}
		for i := range 1 + r.IntN(3) {
			l := listener(i)
			ls.Spec.Listeners = append(ls.Spec.Listeners, gatewayv1.ListenerEntry(l))
		}
		in.Add(ls)
		parents = append(parents, gatewayv1.ParentReference{Kind: ptr.To[gatewayv1.Kind]("ListenerSet"), Name: gatewayv1.ObjectName(ls.Name)})
	}
	backend := func(name string, weight int32) gatewayv1.BackendRef {
		return gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To[gatewayv1.PortNumber](80)}, Weight: ptr.To(weight)}
	}
	backends := func() []gatewayv1.BackendRef {
		var out []gatewayv1.BackendRef
		for range 1 + r.IntN(3) {
			out = append(out, backend([]string{"app", "b", "c", "empty", "missing", "h2"}[r.IntN(6)], int32(1+r.IntN(3))))
		}
		return out
	}
	meta := func(kind string, i int) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("%s%d", kind, i), CreationTimestamp: metav1.Unix(int64(r.IntN(5)), 0)}
	}
	common := func() gatewayv1.CommonRouteSpec {
		return gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parents[r.IntN(len(parents))]}}
	}
	for i := range r.IntN(5) {
		rule := gatewayv1.HTTPRouteRule{}
		for _, b := range backends() {
			rule.BackendRefs = append(rule.BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: b})
		}
		if r.IntN(4) == 0 {
			rule.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
				BackendRef: backend("b", 1).BackendObjectReference, Percent: ptr.To[int32](50)}}}
		}
		in.Add(&gatewayv1.HTTPRoute{ObjectMeta: meta("http", i), Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: common(), Rules: []gatewayv1.HTTPRouteRule{rule}}})
	}
	for i := range r.IntN(3) {
		rule := gatewayv1.GRPCRouteRule{}
		for _, b := range backends() {
			rule.BackendRefs = append(rule.BackendRefs, gatewayv1.GRPCBackendRef{BackendRef: b})
		}
		in.Add(&gatewayv1.GRPCRoute{ObjectMeta: meta("grpc", i), Spec: gatewayv1.GRPCRouteSpec{CommonRouteSpec: common(), Rules: []gatewayv1.GRPCRouteRule{rule}}})
	}
	for i := range r.IntN(3) {
		in.Add(&gatewayv1.TCPRoute{ObjectMeta: meta("tcp", i), Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: common(),
			Rules: []gatewayv1.TCPRouteRule{{BackendRefs: backends()}}}})
	}
	for i := range r.IntN(8) {
		in.Add(&gatewayv1.TLSRoute{ObjectMeta: meta("tls", i), Spec: gatewayv1.TLSRouteSpec{CommonRouteSpec: common(),
			Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", r.IntN(4)))},
			Rules:     []gatewayv1.TLSRouteRule{{BackendRefs: backends()}}}})
	}
	return in
}

// TestSocketBudgetCoversTheConfiguration: the graph admits listeners and
// routes by counting the listening sockets and the TCP and UDP listeners'
// connections before rendering; on Gateways of every shape, the
// configuration never opens more sockets, nor lets TCP and UDP clients
// hold more connections (limit_conn), than it counted, and what it
// counted leaves graph.ClientConnections of workerConnections for other
// clients. A sample passes real nginx -t.
func TestSocketBudgetCoversTheConfiguration(t *testing.T) {
	ca, err := issuer.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.IssueServing("any", nil, []string{"*.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cert"}, Data: map[string][]byte{
		corev1.TLSCertKey: kp.CertPEM, corev1.TLSPrivateKeyKey: kp.KeyPEM}}
	r := rand.New(rand.NewPCG(30, 3))
	refused, refusedL4, servedL4, checked := 0, 0, 0, 0
	for i := range 2000 {
		g := graph.Build(budgetShapes(r, cert), testGateway)
		if !g.Valid {
			continue
		}
		cfg := config.Build(g, config.Includes{})
		opened, counted := len(cfg.ListeningSockets()), g.ListeningSockets()
		if opened > counted {
			t.Fatalf("case %d: the configuration opens %d sockets, the budget counted %d: %v", i, opened, counted, cfg.ListeningSockets())
		}
		held := graph.ConnectionsPerL4Client * int(cfg.Main.L4.MaxConnections) * len(cfg.L4Servers)
		if held > g.L4Connections() {
			t.Fatalf("case %d: %d TCP and UDP servers let clients hold %d connections, the budget counted %d", i, len(cfg.L4Servers), held, g.L4Connections())
		}
		if wc := int(cfg.Main.WorkerConnections); counted+g.L4Connections()+graph.ClientConnections > wc {
			t.Fatalf("case %d: %d sockets and %d connections counted leave fewer than %d of %d connections", i, counted, g.L4Connections(), graph.ClientConnections, wc)
		}
		servedL4 += len(cfg.L4Servers)
		for _, l := range g.Listeners {
			if !l.Attachable && l.Conditions[0].Reason == string(gatewayv1.ListenerReasonPortUnavailable) {
				refused++
				if strings.Contains(l.Conditions[0].Message, "no connections are left") {
					refusedL4++
				}
			}
		}
		if i%200 == 0 {
			checked++
			if out, err := nginxtest.Test(cfg.Files()); err != nil {
				t.Fatalf("case %d: %v\n%s", i, err, out)
			}
		}
	}
	if refused == 0 || refusedL4 == 0 || servedL4 == 0 {
		t.Errorf("%d listeners refused for the budget, %d of them TCP or UDP, %d TCP or UDP servers rendered: the shapes do not reach both sides", refused, refusedL4, servedL4)
	}
	t.Logf("%d listeners refused for the budget (%d TCP or UDP ones for their connections), %d TCP and UDP servers rendered; %d configurations passed nginx -t", refused, refusedL4, servedL4, checked)
}
