package loadbalancer

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// ProxyProtocolAnnotation asks the load balancer to open each TCP
// connection it forwards to the Service's endpoints with a PROXY protocol
// header naming the client's address and port and the Service address's,
// as cloud load balancers do when told to (AWS's
// service.beta.kubernetes.io/aws-load-balancer-proxy-protocol, for one).
// The values are "v1" (the text header) and "v2" (the binary one); UDP
// ports are forwarded without one. It is a prefixed key: on a Gateway's
// data-plane Service it comes from the Gateway's spec.infrastructure
// annotations, which pass only when the GatewayClass's NginxProxy lists the
// key in allowGatewayOverrides.infrastructureKeys (docs/security.md, "Trust
// boundaries").
const ProxyProtocolAnnotation = "local.gatewall.io/proxy-protocol"

// ProxyProtocol is the PROXY protocol version a Proxy opens its backend
// connections with; the zero value sends no header.
type ProxyProtocol string

// The PROXY protocol versions (HAProxy's specification, "The PROXY
// protocol", versions 1 and 2).
const (
	ProxyProtocolNone ProxyProtocol = ""
	ProxyProtocolV1   ProxyProtocol = "v1"
	ProxyProtocolV2   ProxyProtocol = "v2"
)

// ConditionProxyProtocol is the Service condition saying, when False, that
// the Service's ProxyProtocolAnnotation has a value the load balancer does
// not know (its connections are then forwarded without a header).
const ConditionProxyProtocol = "LoadBalancerProxyProtocol"

// proxyProtocolOf reads the Service's annotation; an unknown value is an
// error naming the values known.
func proxyProtocolOf(svc *corev1.Service) (ProxyProtocol, error) {
	v, ok := svc.Annotations[ProxyProtocolAnnotation]
	if !ok {
		return ProxyProtocolNone, nil
	}
	switch p := ProxyProtocol(v); p {
	case ProxyProtocolV1, ProxyProtocolV2:
		return p, nil
	}
	return ProxyProtocolNone, fmt.Errorf("annotation %s is %q; it must be v1 or v2 (connections are forwarded without a PROXY header)", ProxyProtocolAnnotation, v)
}

// v2Signature opens every version 2 header.
var v2Signature = []byte("\r\n\r\n\x00\r\nQUIT\n")

// proxyHeader is the header of version v for a connection from client to
// the load balancer's address local; nil for ProxyProtocolNone. Addresses
// of two families (which a proxy listening on one address never sees) are
// sent as "UNKNOWN" (v1) or LOCAL (v2), which tells the receiver to keep
// the connection's own address.
func proxyHeader(v ProxyProtocol, client, local net.Addr) []byte {
	if v == ProxyProtocolNone {
		return nil
	}
	src, srcOK := addrPort(client)
	dst, dstOK := addrPort(local)
	known := srcOK && dstOK && src.Addr().Is4() == dst.Addr().Is4()
	if v == ProxyProtocolV1 {
		if !known {
			return []byte("PROXY UNKNOWN\r\n")
		}
		family := "TCP4"
		if !src.Addr().Is4() {
			family = "TCP6"
		}
		return fmt.Appendf(nil, "PROXY %s %s %s %d %d\r\n", family, src.Addr(), dst.Addr(), src.Port(), dst.Port())
	}
	h := append([]byte(nil), v2Signature...)
	if !known {
		// Version 2, LOCAL; family unspecified; no addresses.
		return append(h, 0x20, 0x00, 0x00, 0x00)
	}
	family, size := byte(0x11), 12 // TCP over IPv4: two addresses of 4 bytes, two ports
	if !src.Addr().Is4() {
		family, size = 0x21, 36 // TCP over IPv6: two addresses of 16 bytes, two ports
	}
	h = append(h, 0x21, family) // version 2, PROXY
	h = binary.BigEndian.AppendUint16(h, uint16(size))
	h = append(h, src.Addr().AsSlice()...)
	h = append(h, dst.Addr().AsSlice()...)
	h = binary.BigEndian.AppendUint16(h, src.Port())
	return binary.BigEndian.AppendUint16(h, dst.Port())
}

// addrPort is a TCP address with IPv4-mapped IPv6 addresses unmapped, so
// that an IPv4 client of a dual-stack socket is sent as IPv4.
func addrPort(a net.Addr) (netip.AddrPort, bool) {
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.AddrPort{}, false
	}
	ap := t.AddrPort()
	if !ap.Addr().IsValid() {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()), true
}
