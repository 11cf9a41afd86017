package graph

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// bigService is a Service ns/<name> whose port 80 has n endpoints of
// addrs addresses each (only the first counts), in slices of 1,000
// endpoints as Kubernetes writes them.
func bigService(name string, n, base, addrs int) []any {
	objs := []any{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}}
	for s := 0; s*1000 < n; s++ {
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("%s-%d", name, s), Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
		}
		for i := s * 1000; i < min(n, (s+1)*1000); i++ {
			as := make([]string, addrs)
			for a := range as {
				v := base + i*addrs + a
				as[a] = fmt.Sprintf("10.%d.%d.%d", v>>16&255, v>>8&255, v&255)
			}
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: as})
		}
		objs = append(objs, slice)
	}
	return objs
}

// routeTo is an HTTPRoute ns/name created at minute age, to the Services.
func routeTo(name string, age int, services ...string) *gatewayv1.HTTPRoute {
	r := testHTTPRoute(name)
	r.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))
	for i, svc := range services {
		r.Spec.Rules = append(r.Spec.Rules, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch(fmt.Sprintf("/%s/%d", name, i))},
			BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}}})
	}
	return r
}

func routeNamed(g *Gateway, name string) *Route {
	for _, r := range g.Routes {
		if r.Key.Name == name {
			return r
		}
	}
	return nil
}

// TestEndpointBudget: the endpoints a Gateway's data plane holds are spent
// oldest route first: a newer tenant whose Services would fill the dict
// gets what is left, named on its route, and never an older tenant's
// share; a route sharing an older route's Service shares what it got; a
// Service over the bound of one upstream keeps the first endpoints.
func TestEndpointBudget(t *testing.T) {
	per, all := endpoints.MaxEndpointsPerUpstream, endpoints.MaxEndpoints
	var objs []any
	// The old tenant: one Service near the bound of one upstream.
	objs = append(objs, bigService("old", per-1, 0, 1)...)
	// The new tenant: Services of more than the bound each, which would
	// take every endpoint the Gateway has; the first one's endpoints have
	// 100 addresses each, as many as an EndpointSlice allows.
	var flood []string
	for i := 0; i*per < all; i++ {
		name := fmt.Sprintf("flood%03d", i)
		flood = append(flood, name)
		addrs := 1
		if i == 0 {
			addrs = 100
		}
		objs = append(objs, bigService(name, per+50, (i+1)<<20, addrs)...)
	}
	var newer []*gatewayv1.HTTPRoute
	for i := 0; i < len(flood); i += 16 {
		newer = append(newer, routeTo(fmt.Sprintf("newer%d", i/16), 2, flood[i:min(i+16, len(flood))]...))
	}
	for _, r := range newer {
		objs = append(objs, r)
	}
	objs = append(objs, routeTo("older", 1, "old"), routeTo("shares", 3, "old"))
	in := testInput(objs...)
	g := buildTest(t, in)

	older := routeNamed(g, "older")
	if be := older.Rules[0].Backends[0]; len(be.Endpoints) != per-1 || len(be.Refused) != 0 || be.Unsent {
		t.Errorf("the older tenant got %d endpoints (refused %v), want all its %d", len(be.Endpoints), be.Refused, per-1)
	}
	if c := older.Parents[0].Conditions[1]; c.Status != metav1.ConditionTrue {
		t.Errorf("the older tenant's ResolvedRefs: %+v", c)
	}
	if be := routeNamed(g, "shares").Rules[0].Backends[0]; len(be.Endpoints) != per-1 || len(be.Refused) != 0 {
		t.Errorf("a route sharing the older tenant's Service got %d endpoints (%v)", len(be.Endpoints), be.Refused)
	}

	total := per - 1
	var last *Route
	for _, src := range newer {
		r := routeNamed(g, src.Name)
		for _, rule := range r.Rules {
			total += len(rule.Backends[0].Endpoints)
		}
		last = r
	}
	first := routeNamed(g, newer[0].Name).Rules[0].Backends[0]
	// Over the bound of one upstream, it keeps the first by address; its
	// endpoints' other 99 addresses are not endpoints.
	has, _, _ := in.endpoints(key("ns", "flood000"), "http", "")
	if len(has) != per+50 || len(first.Endpoints) != per || first.Endpoints[0] != has[0] || first.Endpoints[per-1] != has[per-1] ||
		!strings.Contains(first.Refused[0], "50 of its 1050 endpoints are not used") {
		t.Errorf("%s: %d endpoints of %d, refused %v; want the first %d", first.Name, len(first.Endpoints), len(has), first.Refused, per)
	}
	if be := last.Rules[len(last.Rules)-1].Backends[0]; len(be.Endpoints) != 1 || !strings.Contains(be.Refused[0], "older routes' backends take") {
		t.Errorf("%s, the last: %d endpoints, refused %v; want what is left, 1", be.Name, len(be.Endpoints), be.Refused)
	}
	if total != all {
		t.Errorf("the Gateway's upstreams hold %d endpoints, want the bound, %d", total, all)
	}
	c := last.Parents[0].Conditions[1]
	if c.Type != string(gatewayv1.RouteConditionResolvedRefs) || c.Status != metav1.ConditionFalse || c.Reason != string(RouteReasonUnusableEndpoints) ||
		!strings.Contains(c.Message, "backendRef ns/flood099:80: 1049 of its 1050 endpoints are not used") {
		t.Errorf("the newer tenant's ResolvedRefs: %+v", c)
	}
	if c := last.resolvedRefs; c.Message != last.Parents[0].Conditions[1].Message {
		t.Errorf("the route's ResolvedRefs and its parent's differ: %q", c.Message)
	}

	// The same Services, the ages swapped: the flood came first.
	for _, r := range newer {
		r.CreationTimestamp = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	}
	g = buildTest(t, testInput(objs...))
	if be := routeNamed(g, "older").Rules[0].Backends[0]; len(be.Endpoints) != 0 || len(be.Refused) != 1 {
		t.Errorf("after an older flood, the tenant got %d endpoints (%v), want none: the flood is older", len(be.Endpoints), be.Refused)
	}
}

// TestUpstreamBudget: past the Gateway's bound of upstreams, a Service
// port's upstream is not sent to the data plane at all (even an empty one
// takes an entry of the dict), and its routes say so.
func TestUpstreamBudget(t *testing.T) {
	var objs []any
	var routes []*gatewayv1.HTTPRoute
	var services []string
	for i := 0; i <= endpoints.MaxUpstreams; i++ {
		name := fmt.Sprintf("s%05d", i)
		services = append(services, name)
		objs = append(objs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
		if len(services) == 16 || i == endpoints.MaxUpstreams {
			routes = append(routes, routeTo(fmt.Sprintf("r%04d", len(routes)), len(routes), services...))
			services = nil
		}
	}
	for _, r := range routes {
		objs = append(objs, r)
	}
	g := buildTest(t, testInput(objs...))
	unsent := 0
	for _, r := range g.Routes {
		for _, rule := range r.Rules {
			if be := rule.Backends[0]; be.Unsent {
				unsent++
				if r.Key.Name != routes[len(routes)-1].Name || !strings.Contains(r.Parents[0].Conditions[1].Message, "Service ports") {
					t.Errorf("%s of %s is not sent: %s", be.Name, r.Key.Name, r.Parents[0].Conditions[1].Message)
				}
			}
		}
	}
	if unsent != 1 {
		t.Errorf("%d upstreams are not sent, want the newest only", unsent)
	}
}

// TestExternalAuthEndpointBudget: an external authorization service's
// upstream takes endpoints of the data plane's dict like a backend's: one
// over the bound of an upstream keeps the first endpoints and the route
// says which were left out (before, its upstream was sent whole, for the
// data plane to refuse, and its Services were not counted in the
// Gateway's budget, which a tenant could overrun through them).
func TestExternalAuthEndpointBudget(t *testing.T) {
	per := endpoints.MaxEndpointsPerUpstream
	objs := bigService("auth", per+50, 0, 1)
	objs = append(objs, bigService("app", 2, 1<<20, 1)...)
	r := routeTo("guarded", 1, "app")
	r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExternalAuth, ExternalAuth: &gatewayv1.HTTPExternalAuthFilter{
		ExternalAuthProtocol: gatewayv1.HTTPRouteExternalAuthHTTPProtocol,
		BackendRef:           gatewayv1.BackendObjectReference{Name: "auth", Port: ptr.To[gatewayv1.PortNumber](80)},
		HTTPAuthConfig:       &gatewayv1.HTTPAuthConfig{}}}}
	objs = append(objs, r)
	g := buildTest(t, testInput(objs...))
	route := routeNamed(g, "guarded")
	ea := route.Rules[0].Filters.ExternalAuth
	if ea == nil || !ea.Backend.Valid {
		t.Fatalf("the external authorization filter did not resolve: %+v", route.Rules[0])
	}
	if len(ea.Backend.Endpoints) != per || len(ea.Backend.Refused) != 1 || !strings.Contains(ea.Backend.Refused[0], "50 of its 1050 endpoints are not used") {
		t.Errorf("the authorization service kept %d endpoints (refused %v), want the first %d", len(ea.Backend.Endpoints), ea.Backend.Refused, per)
	}
	c := route.Parents[0].Conditions[1]
	if c.Reason != string(RouteReasonUnusableEndpoints) || !strings.Contains(c.Message, "backendRef ns/auth:80: 50 of its 1050 endpoints are not used") {
		t.Errorf("ResolvedRefs does not name the authorization service's endpoints left out: %+v", c)
	}
}
