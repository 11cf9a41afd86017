package kubenode

import (
	"fmt"
	"net/netip"
)

// Network is a node's addressing, derived from one CIDR: the pods' subnet is
// its first /24 (the bridge takes the first address), and the uplink between
// the host and the node is its last /30.
type Network struct {
	CIDR netip.Prefix
	// Pods is the pod subnet; Gateway the bridge's address in it.
	Pods    netip.Prefix
	Gateway netip.Addr
	// HostIP and NodeIP are the host's and the node's ends of the uplink.
	HostIP, NodeIP netip.Addr
}

// PlanNetwork derives a node's Network from cidr, an IPv4 private range of
// at least /23 (say 10.246.0.0/16).
func PlanNetwork(cidr string) (Network, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return Network{}, fmt.Errorf("kubenode: network %q: %w", cidr, err)
	}
	p = p.Masked()
	if !p.Addr().Is4() || !p.Addr().IsPrivate() || p.Bits() > 23 {
		return Network{}, fmt.Errorf("kubenode: network %s: want a private IPv4 range of /23 or larger", p)
	}
	pods := netip.PrefixFrom(p.Addr(), 24)
	last := lastAddr(p)
	b := last.As4()
	b[3] &^= 3 // the last /30: .252 network, .253 host, .254 node, .255 broadcast
	uplink := netip.AddrFrom4(b)
	return Network{
		CIDR:    p,
		Pods:    pods,
		Gateway: pods.Addr().Next(),
		HostIP:  uplink.Next(),
		NodeIP:  uplink.Next().Next(),
	}, nil
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= ^uint32(0) >> p.Bits()
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
