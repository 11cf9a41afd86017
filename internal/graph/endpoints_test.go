package graph

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func appSlice(name string, t discoveryv1.AddressType, port discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "app"}},
		AddressType: t,
		Ports:       []discoveryv1.EndpointPort{port},
		Endpoints:   eps,
	}
}

func httpPort(n int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To("http"), Port: ptr.To(n)}
}

func addrs(a ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: a} }

// each is an endpoint of each address.
func each(a ...string) []discoveryv1.Endpoint {
	var out []discoveryv1.Endpoint
	for _, x := range a {
		out = append(out, addrs(x))
	}
	return out
}

// TestEndpoints: only plain unicast IP addresses and valid TCP ports reach
// upstreams; everything left out is named, per EndpointSlice, for the
// route's status. testInput's slice app-1 holds 10.0.0.1:8080.
func TestEndpoints(t *testing.T) {
	app1 := Endpoint{"10.0.0.1", 8080}
	cases := []struct {
		name    string
		slice   *discoveryv1.EndpointSlice
		want    []Endpoint
		refused string // "" when nothing is refused
	}{
		{"IPv6 addresses are canonical, IPv4-mapped ones unmapped", appSlice("app-6", discoveryv1.AddressTypeIPv6, httpPort(8080), each("2001:DB8::0:1", "::ffff:10.0.0.3")...),
			[]Endpoint{app1, {"10.0.0.3", 8080}, {"2001:db8::1", 8080}}, ""},
		// Each is the IPv4 address it maps to the kernel: ::ffff:0.0.0.0
		// reaches the data plane pod's own listeners.
		{"IPv4-mapped addresses are checked unmapped", appSlice("app-6", discoveryv1.AddressTypeIPv6, httpPort(8080),
			addrs("::ffff:0.0.0.0"), addrs("::ffff:127.0.0.1"), addrs("::FFFF:169.254.169.254"), addrs("::ffff:224.0.0.1"), addrs("0:0:0:0:0:ffff:7f00:1")),
			[]Endpoint{app1}, "address ::ffff:0.0.0.0 is unspecified, loopback, link-local or multicast, address ::ffff:127.0.0.1 is unspecified, " +
				"loopback, link-local or multicast, address ::ffff:169.254.169.254 is unspecified, loopback, link-local or multicast and 2 more refused addresses"},
		{"names, zones and padding are refused, quoted, three at most", appSlice("app-6", discoveryv1.AddressTypeIPv6, httpPort(8080),
			each("fe80::1%eth0", "fe80::1%x];server_tokens on;#", "app.example.com", "10.0.0.2 ", "2001:db8::1")...),
			[]Endpoint{app1, {"2001:db8::1", 8080}},
			`EndpointSlice ns/app-6: address "fe80::1%eth0" is not an IP address, address "fe80::1%x];server_tokens on;#" is not an IP address, ` +
				`address "app.example.com" is not an IP address and 1 more refused addresses; not used`},
		{"addresses the API server refuses", appSlice("app-2", discoveryv1.AddressTypeIPv4, httpPort(8080),
			append(each("127.0.0.1", "0.0.0.0", "169.254.1.1", "224.0.0.1"), addrs("::1"))...),
			[]Endpoint{app1}, "address 127.0.0.1 is unspecified, loopback, link-local or multicast"},
		// The other addresses of an endpoint are the same pod's: one
		// endpoint with 100 would weigh as 100 pods, and fill the data
		// plane's dict a hundred times faster.
		{"an endpoint is its first address", appSlice("app-2", discoveryv1.AddressTypeIPv4, httpPort(8080),
			addrs("10.0.0.5", "10.0.0.6", "10.0.0.7"), addrs("127.0.0.1", "10.0.0.8")),
			[]Endpoint{app1, {"10.0.0.5", 8080}}, "address 127.0.0.1 is unspecified"},
		{"a port out of range", appSlice("app-2", discoveryv1.AddressTypeIPv4, httpPort(70000), addrs("10.0.0.4")),
			[]Endpoint{app1}, "EndpointSlice ns/app-2: port http is 70000, not between 1 and 65535; none of its endpoints is used"},
		{"a port without a number", appSlice("app-2", discoveryv1.AddressTypeIPv4, discoveryv1.EndpointPort{Name: ptr.To("http")}, addrs("10.0.0.4")),
			[]Endpoint{app1}, "port http has no number"},
		{"a UDP port", appSlice("app-2", discoveryv1.AddressTypeIPv4, discoveryv1.EndpointPort{Name: ptr.To("http"), Port: ptr.To[int32](53),
			Protocol: ptr.To(corev1.ProtocolUDP)}, addrs("10.0.0.4")), []Endpoint{app1}, `port http is "UDP", not TCP`},
		// Its names are the data plane's to resolve (TestFQDNEndpoints).
		{"an FQDN slice", appSlice("app-dns", discoveryv1.AddressTypeFQDN, httpPort(8080), addrs("backend.example.com")),
			[]Endpoint{app1}, ""},
		{"names that are not DNS names", appSlice("app-dns", discoveryv1.AddressTypeFQDN, httpPort(8080),
			each("Backend.example.com", "10.0.0.9", "a..b", "x;server_tokens on")...),
			[]Endpoint{app1}, `EndpointSlice ns/app-dns: "Backend.example.com" is not a DNS name: lower-case letters, digits, hyphens and dots only, ` +
				`"10.0.0.9" is an IP address, which DNS does not resolve, "a..b" is not a DNS name`},
		{"an unknown address type", appSlice("app-x", "Carrier-Pigeon", httpPort(8080), addrs("10.0.0.4")),
			[]Endpoint{app1}, `addressType "Carrier-Pigeon" is not supported`},
		{"a slice of another port is not this port's business", appSlice("app-2", discoveryv1.AddressTypeFQDN,
			discoveryv1.EndpointPort{Name: ptr.To("metrics"), Port: ptr.To[int32](0)}, addrs("x")), []Endpoint{app1}, ""},
		{"endpoints that are not ready are left out silently", appSlice("app-2", discoveryv1.AddressTypeIPv4, httpPort(8080),
			discoveryv1.Endpoint{Addresses: []string{"10.0.0.5", "not an address"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}),
			[]Endpoint{app1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput(tc.slice)
			got, _, refused := in.endpoints(key("ns", "app"), "http", "")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("endpoints %v, want %v", got, tc.want)
			}
			msg := strings.Join(refused, "; ")
			if (tc.refused == "") != (msg == "") || !strings.Contains(msg, tc.refused) {
				t.Errorf("refused %q, want %q", msg, tc.refused)
			}
		})
	}
}

// TestServingTerminatingEndpoints: ready endpoints serve; endpoints that
// are serving but terminating serve only when no endpoint is ready, so a
// Service whose every pod drains still answers; endpoints neither ready
// nor serving never serve.
func TestServingTerminatingEndpoints(t *testing.T) {
	draining := func(a string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{
			Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}}
	}
	gone := discoveryv1.Endpoint{Addresses: []string{"10.0.0.9"}, Conditions: discoveryv1.EndpointConditions{
		Ready: ptr.To(false), Serving: ptr.To(false), Terminating: ptr.To(true)}}
	ready := discoveryv1.Endpoint{Addresses: []string{"10.0.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
	only := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		s := appSlice("app-1", discoveryv1.AddressTypeIPv4, httpPort(8080), eps...)
		return s
	}
	cases := []struct {
		name  string
		slice *discoveryv1.EndpointSlice
		want  []Endpoint
	}{
		{"a ready endpoint wins over draining ones", only(draining("10.0.0.2"), ready, gone), []Endpoint{{"10.0.0.3", 8080}}},
		{"draining endpoints serve when none is ready", only(draining("10.0.0.2"), draining("10.0.0.1"), gone),
			[]Endpoint{{"10.0.0.1", 8080}, {"10.0.0.2", 8080}}},
		{"endpoints neither ready nor serving never serve", only(gone), nil},
		{"an endpoint without conditions is ready", only(addrs("10.0.0.4"), draining("10.0.0.2")), []Endpoint{{"10.0.0.4", 8080}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			for k := range in.EndpointSlices {
				delete(in.EndpointSlices, k)
			}
			in.Add(tc.slice)
			got, _, refused := in.endpoints(key("ns", "app"), "http", "")
			if !reflect.DeepEqual(got, tc.want) || len(refused) > 0 {
				t.Errorf("endpoints %v (refused %v), want %v", got, refused, tc.want)
			}
		})
	}
}

// TestRefusedEndpointsInResolvedRefs: a route whose references resolve but
// whose Service's endpoints were refused does not say ResolvedRefs=True;
// a Gateway API reason wins when one applies too. Refusals are named once
// however many rules use the backend.
func TestRefusedEndpointsInResolvedRefs(t *testing.T) {
	pigeons := appSlice("app-x", "Carrier-Pigeon", httpPort(8080), addrs("10.0.0.4"))
	missing := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: "nowhere", Port: ptr.To[gatewayv1.PortNumber](80)}}}
	cases := []struct {
		name   string
		route  *gatewayv1.HTTPRoute
		reason string
	}{
		{"only endpoints refused", testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: appRefs()},
			gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefixMatch("/b")}, BackendRefs: appRefs()}), "UnusableEndpoints"},
		{"a missing backend too", testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: append(appRefs(), missing)}), "BackendNotFound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := buildTest(t, testInput(pigeons, tc.route))
			c := g.Routes[0].resolvedRefs
			if c.Status != metav1.ConditionFalse || c.Reason != tc.reason || strings.Count(c.Message, "addressType") != 1 {
				t.Errorf("ResolvedRefs %s %s: %s", c.Status, c.Reason, c.Message)
			}
			if eps := g.Routes[0].Rules[0].Backends[0].Endpoints; len(eps) != 1 {
				t.Errorf("the valid endpoint must keep serving: %v", eps)
			}
		})
	}
}

// TestFQDNEndpoints: the endpoints of EndpointSlices of addressType FQDN
// are names the data plane resolves, with the slice's port, ready ones
// first as for addresses, without a final dot, sorted, each once.
func TestFQDNEndpoints(t *testing.T) {
	notReady := discoveryv1.Endpoint{Addresses: []string{"draining.example.com"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true)}}
	in := testInput(appSlice("app-dns", discoveryv1.AddressTypeFQDN, httpPort(8443),
		append(each("b.example.com.", "a.example.com", "b.example.com"), notReady)...))
	ips, names, refused := in.endpoints(key("ns", "app"), "http", "")
	if want := []string{"a.example.com:8443", "b.example.com:8443"}; !reflect.DeepEqual(names, want) || len(ips) != 1 || len(refused) > 0 {
		t.Errorf("names %v, addresses %v, refused %v; want names %v beside 10.0.0.1", names, ips, refused, want)
	}
	in = NewInput("example.com/gatewall")
	in.Add(appSlice("app-dns", discoveryv1.AddressTypeFQDN, httpPort(8443), notReady))
	if _, names, _ := in.endpoints(key("ns", "app"), "http", ""); !reflect.DeepEqual(names, []string{"draining.example.com:8443"}) {
		t.Errorf("a Service whose only endpoint is a terminating name: %v", names)
	}
}
