package podnet

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// checkCIDRFree refuses a pod CIDR that overlaps a route the host already
// has (another local node's pod network, a VPN, a real cluster's pods): a
// more specific route elsewhere would silently take some pods' traffic.
func (n *Network) checkCIDRFree(ctx context.Context) error {
	out, err := n.ip.run(ctx, "-4", "route", "show")
	if err != nil {
		return fmt.Errorf("podnet: listing host routes: %w", err)
	}
	if r, ok := overlappingRoute(out, n.cidr); ok {
		return fmt.Errorf("podnet: pod CIDR %s overlaps the host route %q (another local node, or a network of this host, uses these addresses): choose another CIDR", n.cidr, r)
	}
	return nil
}

// overlappingRoute returns the first route of `ip -4 route show` output whose
// destination overlaps cidr (the default route excepted).
func overlappingRoute(routes string, cidr netip.Prefix) (string, bool) {
	for _, line := range strings.Split(routes, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		dst := fields[0]
		if dst == "default" || dst == "broadcast" || dst == "local" || dst == "unreachable" || dst == "blackhole" || dst == "prohibit" {
			if dst == "default" || len(fields) < 2 {
				continue
			}
			dst = fields[1]
		}
		p, err := netip.ParsePrefix(dst)
		if err != nil {
			a, aerr := netip.ParseAddr(dst)
			if aerr != nil {
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Overlaps(cidr) {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}
