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

	"github.com/gatewall/gatewall/internal/endpoints"
)

func externalService(name, externalName string, ports ...int32) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: externalName}}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", p), Port: p})
	}
	return svc
}

func refsTo(name string, port int32) []gatewayv1.HTTPBackendRef {
	return []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(port))}}}}
}

// TestExternalNameBackend: an ExternalName Service is a backend whose one
// endpoint is its name on the backendRef's port, which the data plane
// resolves; its requests carry the name as Host unless the rule sets Host;
// the reference resolves, and the route says the name is resolved by the
// data plane.
func TestExternalNameBackend(t *testing.T) {
	rewriteHost := rewriteFilter(gatewayv1.HTTPURLRewriteFilter{Hostname: ptr.To(gatewayv1.PreciseHostname("api.example.com"))})
	route := testHTTPRoute("r",
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/ext")}, BackendRefs: refsTo("partner-api", 443)},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/rewritten")}, Filters: []gatewayv1.HTTPRouteFilter{rewriteHost}, BackendRefs: refsTo("partner-api", 443)},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/header")}, Filters: []gatewayv1.HTTPRouteFilter{headerFilter("host", "h.example.com")}, BackendRefs: refsTo("partner-api", 443)},
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/noports")}, BackendRefs: refsTo("noports", 8443)},
	)
	g := buildTest(t, testInput(externalService("partner-api", "partner.example.org.", 80, 443), externalService("noports", "api.example.net"), route))
	r := g.Routes[0]
	be := r.Rules[0].Backends[0]
	if !be.Valid || be.ExternalName != "partner.example.org" || !reflect.DeepEqual(be.Names, []string{"partner.example.org:443"}) || len(be.Endpoints) > 0 {
		t.Fatalf("backend %+v: want the name partner.example.org:443", be)
	}
	if h := be.RequestHeaders; h == nil || len(h.Set) != 1 || h.Set[0] != (Header{Name: "Host", Value: "partner.example.org"}) {
		t.Errorf("requests to an ExternalName carry %+v, want Host: partner.example.org", h)
	}
	for i := 1; i <= 2; i++ {
		if h := r.Rules[i].Backends[0].RequestHeaders; h != nil {
			t.Errorf("rule %d sets Host itself, but its backend sets %+v too", i, h)
		}
	}
	if be := r.Rules[3].Backends[0]; !be.Valid || !reflect.DeepEqual(be.Names, []string{"api.example.net:8443"}) {
		t.Errorf("an ExternalName Service without ports: %+v", be)
	}
	c := r.resolvedRefs
	if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "backendRef ns/partner-api:443 is an ExternalName Service: the data plane resolves partner.example.org") ||
		strings.Count(c.Message, "ExternalName") != 2 {
		t.Errorf("ResolvedRefs %s %s: %s", c.Status, c.Reason, c.Message)
	}
}

// TestExternalNameRefused: a name DNS does not resolve, and a port the
// Service does not list, are refused on the route.
func TestExternalNameRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		svc  *corev1.Service
		port int32
		want string
	}{
		"an IP address": {externalService("x", "127.0.0.1", 80), 80, `"127.0.0.1" is an IP address, which DNS does not resolve`},
		"not a name":    {externalService("x", "a b", 80), 80, "is not a DNS name"},
		"another port":  {externalService("x", "x.example.com", 80), 81, "the Service has no port 81"},
	} {
		t.Run(name, func(t *testing.T) {
			g := buildTest(t, testInput(tc.svc, testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: refsTo("x", tc.port)})))
			c := g.Routes[0].resolvedRefs
			if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, tc.want) {
				t.Errorf("ResolvedRefs %s %s: %s; want %q", c.Status, c.Reason, c.Message, tc.want)
			}
		})
	}
}

// TestNameBudget: a DNS name takes endpoints.MaxAnswersPerName endpoints
// of its upstream's and its Gateway's budget; the names that do not fit
// are not sent, and named on the route.
func TestNameBudget(t *testing.T) {
	fit := (endpoints.MaxEndpointsPerUpstream - 8) / endpoints.MaxAnswersPerName
	var eps []discoveryv1.Endpoint
	for i := range 8 {
		eps = append(eps, addrs(fmt.Sprintf("10.1.0.%d", i+1)))
	}
	for i := range fit + 3 {
		eps = append(eps, addrs(fmt.Sprintf("n%03d.example.com", i)))
	}
	ipSlice := appSlice("app-ip", discoveryv1.AddressTypeIPv4, httpPort(8080), eps[:8]...)
	nameSlice := appSlice("app-dns", discoveryv1.AddressTypeFQDN, httpPort(8080), eps[8:]...)
	g := buildTest(t, testInput(ipSlice, nameSlice, testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()})))
	be := g.Routes[0].Rules[0].Backends[0]
	if len(be.Endpoints) != 9 || len(be.Names) != (endpoints.MaxEndpointsPerUpstream-9)/endpoints.MaxAnswersPerName || be.Names[0] != "n000.example.com:8080" {
		t.Fatalf("%d endpoints and %d names (first %v); want 9 and %d", len(be.Endpoints), len(be.Names), be.Names[:1], (endpoints.MaxEndpointsPerUpstream-9)/endpoints.MaxAnswersPerName)
	}
	c := g.Routes[0].resolvedRefs
	if c.Reason != string(RouteReasonUnusableEndpoints) || !strings.Contains(c.Message, "4 of its 65 DNS names are not resolved (the first by name are): each takes 16 of the 1000 endpoints") {
		t.Errorf("ResolvedRefs %s %s: %s", c.Status, c.Reason, c.Message)
	}
}

// TestNamesPerGateway: a Gateway's names are bounded, oldest route first.
func TestNamesPerGateway(t *testing.T) {
	objs := []any{}
	per := 50
	services := endpoints.MaxNames/per + 1
	for i := range services {
		svc := fmt.Sprintf("s%02d", i)
		var eps []discoveryv1.Endpoint
		for j := range per {
			eps = append(eps, addrs(fmt.Sprintf("n%02d.%s.example.com", j, svc)))
		}
		slice := appSlice(svc, discoveryv1.AddressTypeFQDN, httpPort(80), eps...)
		slice.Labels[discoveryv1.LabelServiceName] = svc
		route := testHTTPRoute(svc, gatewayv1.HTTPRouteRule{BackendRefs: refsTo(svc, 80)})
		route.CreationTimestamp = metav1.Unix(int64(1000+i), 0)
		objs = append(objs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: svc}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
			slice, route)
	}
	g := buildTest(t, testInput(objs...))
	last := routeNamed(g, fmt.Sprintf("s%02d", services-1))
	if n := len(last.Rules[0].Backends[0].Names); n != 0 || !strings.Contains(last.resolvedRefs.Message, "the Gateway's data plane resolves 1000 names") {
		t.Errorf("the newest route's Service: %d names, %s", n, last.resolvedRefs.Message)
	}
	if n := len(routeNamed(g, "s00").Rules[0].Backends[0].Names); n != per {
		t.Errorf("the oldest route's Service: %d names, want %d", n, per)
	}
}
