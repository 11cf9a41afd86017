package graph

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// RequestedAddresses are the IP addresses a Gateway's spec.addresses asks
// for, in spec order. An IPAddress entry without a value asks for any
// address, which every data plane Service gets anyway.
func RequestedAddresses(gw *gatewayv1.Gateway) []string {
	var out []string
	for _, a := range gw.Spec.Addresses {
		if a.Value != "" {
			out = append(out, a.Value)
		}
	}
	return out
}

// checkAddresses returns why a Gateway's spec.addresses cannot be served
// ("" when they can): only IP addresses, given to the data plane's
// LoadBalancer Service.
func checkAddresses(gw *gatewayv1.Gateway, np *v1alpha2.NginxProxySpec) string {
	for i, a := range gw.Spec.Addresses {
		if a.Type != nil && *a.Type != gatewayv1.IPAddressType {
			return fmt.Sprintf("spec.addresses[%d]: type %q is not supported; only IPAddress", i, *a.Type)
		}
		if a.Value == "" {
			continue
		}
		// As the Gateway API's CEL rule (isIP): no zone, and no IPv4-mapped
		// IPv6 address, which is an IPv4 address written as another.
		if ip, err := netip.ParseAddr(a.Value); err != nil || ip.Zone() != "" || ip.Is4In6() {
			return fmt.Sprintf("spec.addresses[%d]: %q is not an IP address", i, a.Value)
		}
	}
	if len(RequestedAddresses(gw)) > 0 {
		if k := np.Kubernetes; k != nil && k.Service != nil && k.Service.Type != nil && *k.Service.Type != corev1.ServiceTypeLoadBalancer {
			return fmt.Sprintf("spec.addresses needs the data plane Service to be of type LoadBalancer; the NginxProxy makes it %s", *k.Service.Type)
		}
	}
	return ""
}
