package graph

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

func TestCheckAddresses(t *testing.T) {
	ip, host := ptr.To(gatewayv1.IPAddressType), ptr.To(gatewayv1.HostnameAddressType)
	clusterIP := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Service: &v1alpha2.ServiceSpec{Type: ptr.To(corev1.ServiceTypeClusterIP)}}}
	for _, tc := range []struct {
		name  string
		addrs []gatewayv1.GatewaySpecAddress
		np    *v1alpha2.NginxProxySpec
		want  string // substring of the refusal; "" when accepted
	}{
		{name: "none", np: &v1alpha2.NginxProxySpec{}},
		{name: "an IP", addrs: []gatewayv1.GatewaySpecAddress{{Type: ip, Value: "127.0.3.250"}}, np: &v1alpha2.NginxProxySpec{}},
		{name: "type defaults to IPAddress", addrs: []gatewayv1.GatewaySpecAddress{{Value: "2001:db8::1"}}, np: &v1alpha2.NginxProxySpec{}},
		{name: "any address", addrs: []gatewayv1.GatewaySpecAddress{{Type: ip}}, np: clusterIP},
		{name: "several IPs are accepted (Programmed says they cannot all be used)", addrs: []gatewayv1.GatewaySpecAddress{{Value: "10.0.0.1"}, {Value: "10.0.0.2"}}, np: &v1alpha2.NginxProxySpec{}},
		{name: "hostname", addrs: []gatewayv1.GatewaySpecAddress{{Type: host, Value: "gw.example.com"}}, np: &v1alpha2.NginxProxySpec{}, want: `type "Hostname" is not supported`},
		{name: "other type", addrs: []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.AddressType("test/fake")), Value: "x"}}, np: &v1alpha2.NginxProxySpec{}, want: "is not supported"},
		{name: "not an IP", addrs: []gatewayv1.GatewaySpecAddress{{Type: ip, Value: "10.0.0.1; evil"}}, np: &v1alpha2.NginxProxySpec{}, want: "is not an IP address"},
		// The API server's isIP refuses both; an IPv4-mapped address is an
		// IPv4 one written as IPv6, which no check may read as another.
		{name: "IPv4-mapped", addrs: []gatewayv1.GatewaySpecAddress{{Value: "::ffff:10.0.0.1"}}, np: &v1alpha2.NginxProxySpec{}, want: "is not an IP address"},
		{name: "a zone", addrs: []gatewayv1.GatewaySpecAddress{{Value: "fe80::1%eth0"}}, np: &v1alpha2.NginxProxySpec{}, want: "is not an IP address"},
		{name: "IP with a ClusterIP Service", addrs: []gatewayv1.GatewaySpecAddress{{Value: "10.0.0.1"}}, np: clusterIP, want: "type LoadBalancer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := &gatewayv1.Gateway{Spec: gatewayv1.GatewaySpec{Addresses: tc.addrs}}
			got := checkAddresses(gw, tc.np)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("checkAddresses = %q, want %q", got, tc.want)
			}
		})
	}
}
