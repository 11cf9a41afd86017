package endpoints

import (
	"fmt"
	"net/netip"
)

// Address returns the address an endpoint may have, as the kernel reads
// it, or why it may not have it. It is the one check of every address the
// data plane connects to: the addresses of EndpointSlices and cluster IPs
// (package graph), and the answers of DNS names (the data plane's
// endpoints client), so that a name answering 127.0.0.1 or 169.254.169.254
// is refused as an EndpointSlice listing them is.
//
// Only plain unicast IP addresses pass. Like the API server for
// EndpointSlices, it refuses the unspecified, loopback and link-local
// addresses: a data plane told to proxy to them would reach itself (the
// WAF enforcer, the agent, NGINX's own listeners) or its node (a cloud's
// metadata service); and multicast ones. An IPv6 zone ("fe80::1%eth0") may
// hold any characters and means nothing on another host.
//
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address a.b.c.d
// to the kernel: it is unmapped before it is checked, and returned
// unmapped. Checked as written, ::ffff:0.0.0.0 is not "unspecified" to
// netip, and a connection to it reaches the data plane pod's own listeners.
func Address(a netip.Addr) (netip.Addr, error) {
	if !a.IsValid() || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("address %s is not an IP address", a)
	}
	u := a.Unmap()
	if u.IsUnspecified() || u.IsLoopback() || u.IsLinkLocalUnicast() || u.IsMulticast() {
		return netip.Addr{}, fmt.Errorf("address %s is unspecified, loopback, link-local or multicast", a)
	}
	return u, nil
}
