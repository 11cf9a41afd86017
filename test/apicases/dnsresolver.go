package apicases

import (
	"fmt"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// npDNS is an NginxProxy with this dnsResolver.
func npDNS(r v1alpha2.DNSResolver) *v1alpha2.NginxProxy {
	return np(func(s *v1alpha2.NginxProxySpec) { s.DNSResolver = &r })
}

func resolverAddr(t v1alpha2.DNSResolverAddressType, v string) v1alpha2.DNSResolverAddress {
	return v1alpha2.DNSResolverAddress{Type: t, Value: v}
}

// dnsResolverCases are NGINX Gateway Fabric's spec.dnsResolver, with its
// CRD's rules, and the rules it leaves to Go that the CRD holds here
// (an IP address that is one, a hostname that is a DNS name).
func dnsResolverCases() []Case {
	const path = "spec.dnsResolver"
	ip, host := v1alpha2.DNSResolverIPAddressType, v1alpha2.DNSResolverHostnameType
	d := func(s string) *v1alpha1.Duration { return ptr(v1alpha1.Duration(s)) }
	cs := []Case{
		{Name: "dnsResolver: two resolvers and every field", Object: npDNS(v1alpha2.DNSResolver{
			Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(ip, "192.0.2.53"), resolverAddr(ip, "198.51.100.53")},
			Timeout:   d("20s"), CacheTTL: d("45s"), DisableIPv6: ptr(false),
		})},
		{Name: "dnsResolver: IPv6 and a hostname", Object: npDNS(v1alpha2.DNSResolver{
			Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(ip, "2001:db8::53"), resolverAddr(host, "dns.google"), resolverAddr(host, "kube-dns.kube-system.svc.cluster.local")},
		})},
		{Name: "dnsResolver: no address", Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{}}), Field: path + ".addresses", Message: "should have at least 1 items"},
		{Name: "dnsResolver: no addresses", Object: npDNS(v1alpha2.DNSResolver{}), Field: path + ".addresses", Message: "Required value"},
		{Name: "dnsResolver: 17 addresses", Object: npDNS(v1alpha2.DNSResolver{Addresses: func() []v1alpha2.DNSResolverAddress {
			var out []v1alpha2.DNSResolverAddress
			for i := range 17 {
				out = append(out, resolverAddr(ip, fmt.Sprintf("10.0.0.%d", i+1)))
			}
			return out
		}()}), Field: path + ".addresses", Message: "must have at most 16 items"},
		{Name: "dnsResolver: type CIDR", Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr("CIDR", "10.0.0.0/8")}}),
			Field: path + ".addresses[0].type", Message: `Unsupported value: "CIDR"`},
		{Name: "dnsResolver: empty value", Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(host, "")}}),
			Field: path + ".addresses[0].value", Message: "should be at least 1 chars long"},
		{Name: "dnsResolver: value of 254 bytes", Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(host, strings.Repeat("a.", 127))}}),
			Field: path + ".addresses[0].value", Message: "may not be more than 253 bytes"},
		{Name: "dnsResolver: timeout 1.5s", Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(ip, "10.0.0.10")}, Timeout: d("1.5s")}),
			Field: path + ".timeout", Message: "should match '" + validation.DurationPattern + "'"},
		{Name: "dnsResolver: cacheTTL 10000s", Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(ip, "10.0.0.10")}, CacheTTL: d("10000s")}),
			Field: path + ".cacheTTL", Message: "should match '" + validation.DurationPattern + "'"},
	}
	for _, v := range []string{"dns.google", "10.0.0.300", "::ffff:10.0.0.1", "fe80::1%eth0", "10.0.0.1:53", " 10.0.0.1"} {
		cs = append(cs, Case{Name: fmt.Sprintf("dnsResolver: IPAddress %q", v), Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(ip, v)}}),
			Field: path + ".addresses[0]", Message: validation.MsgResolverIP})
	}
	for _, v := range []string{"DNS.Google", "dns.google.", "dns_google", "-dns.google", "dns..google", "dns.google:53", "8.8.8.8 ; x", strings.Repeat("a", 64) + ".example"} {
		cs = append(cs, Case{Name: fmt.Sprintf("dnsResolver: Hostname %q", v), Object: npDNS(v1alpha2.DNSResolver{Addresses: []v1alpha2.DNSResolverAddress{resolverAddr(host, v)}}),
			Field: path + ".addresses[0]", Message: validation.MsgResolverHostname})
	}
	return cs
}
