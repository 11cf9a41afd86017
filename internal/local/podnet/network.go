package podnet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"sync"
)

// Options configure a pod network.
type Options struct {
	// Prefix starts the name of every namespace and host link the network
	// creates; at start, anything already named so is removed as a leftover
	// of a crashed run. 1–8 characters [a-z0-9]. Defaults to "gwl".
	Prefix string
	// CIDR is the IPv4 pod network. Its first address is the node's address
	// inside the network, its last usable address the host's uplink address,
	// and pods get the addresses between. Defaults to 10.244.0.0/16.
	CIDR string
	// LockDir holds the lock that keeps two networks with the same prefix
	// from running at once. Defaults to /run/gatewall-local.
	LockDir string
}

// Network is a running pod network.
type Network struct {
	ip     ipTool
	prefix string
	cidr   netip.Prefix
	nodeIP netip.Addr // in the node namespace, on the uplink and every pod link
	hostIP netip.Addr // on the host end of the uplink
	lock   *os.File

	mu   sync.Mutex
	pods map[netip.Addr]*Sandbox
}

func (o Options) withDefaults() (Options, netip.Prefix, error) {
	if o.Prefix == "" {
		o.Prefix = "gwl"
	}
	if o.CIDR == "" {
		o.CIDR = "10.244.0.0/16"
	}
	if o.LockDir == "" {
		o.LockDir = "/run/gatewall-local"
	}
	if !regexp.MustCompile(`^[a-z0-9]{1,8}$`).MatchString(o.Prefix) {
		return o, netip.Prefix{}, fmt.Errorf("podnet: prefix %q must be 1-8 characters [a-z0-9]", o.Prefix)
	}
	cidr, err := netip.ParsePrefix(o.CIDR)
	if err != nil || !cidr.Addr().Is4() || cidr.Bits() > 28 || cidr.Bits() < 8 {
		return o, netip.Prefix{}, fmt.Errorf("podnet: CIDR %q must be an IPv4 prefix between /8 and /28", o.CIDR)
	}
	if cidr.Masked() != cidr {
		return o, netip.Prefix{}, fmt.Errorf("podnet: CIDR %q has host bits set (want %s)", o.CIDR, cidr.Masked())
	}
	return o, cidr, nil
}

// Setup removes leftovers of an earlier run with the same prefix and creates
// the node namespace, the uplink and the host route to the pod CIDR.
func Setup(ctx context.Context, opts Options) (*Network, error) {
	opts, cidr, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ip, err := findIP()
	if err != nil {
		return nil, err
	}
	lock, err := acquireLock(opts.LockDir, opts.Prefix)
	if err != nil {
		return nil, err
	}
	n := &Network{
		ip: ip, prefix: opts.Prefix, cidr: cidr, lock: lock,
		nodeIP: cidr.Addr().Next(),
		hostIP: lastUsable(cidr),
		pods:   map[netip.Addr]*Sandbox{},
	}
	if err := n.removeLeftovers(ctx); err != nil {
		n.releaseLock()
		return nil, err
	}
	if err := n.checkCIDRFree(ctx); err != nil {
		n.releaseLock()
		return nil, err
	}
	if err := n.createNode(ctx); err != nil {
		return nil, errors.Join(err, n.Teardown(context.WithoutCancel(ctx)))
	}
	return n, nil
}

// NodeIP is the node's address in the pod network: the pods' gateway, where
// the node's own servers listen (see InNode). Reachable from the host too.
func (n *Network) NodeIP() netip.Addr { return n.nodeIP }

// HostIP is the host's address on the uplink: the source of host traffic to pods.
func (n *Network) HostIP() netip.Addr { return n.hostIP }

// CIDR is the pod network.
func (n *Network) CIDR() netip.Prefix { return n.cidr }

// InNode runs fn inside the node namespace; listeners it opens on NodeIP
// serve both the host and the pods.
func (n *Network) InNode(fn func() error) error {
	return inNamespace(namespacePath(n.nodeNamespace()), fn)
}

func (n *Network) nodeNamespace() string { return n.prefix + "-node" }
func (n *Network) uplink() string        { return n.prefix + "-up" }

func (n *Network) createNode(ctx context.Context) error {
	ns := n.nodeNamespace()
	if _, err := n.ip.run(ctx, "netns", "add", ns); err != nil {
		return fmt.Errorf("podnet: %w", err)
	}
	// ip_forward is per network namespace: turning it on here routes between
	// pods without touching the host's setting.
	if err := n.InNode(func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644)
	}); err != nil {
		return fmt.Errorf("podnet: enabling forwarding in %s: %w", ns, err)
	}
	node, host := n.nodeIP.String(), n.hostIP.String()
	if err := n.ip.batch(ctx, "", []string{
		fmt.Sprintf("link add %s type veth peer name uplink netns %s", n.uplink(), ns),
		fmt.Sprintf("addr add %s/32 dev %s", host, n.uplink()),
		fmt.Sprintf("link set %s up", n.uplink()),
	}); err != nil {
		return fmt.Errorf("podnet: creating the uplink: %w", err)
	}
	if err := n.ip.batch(ctx, ns, []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/32 dev uplink", node),
		"link set uplink up",
		fmt.Sprintf("route add %s/32 dev uplink src %s", host, node),
	}); err != nil {
		return fmt.Errorf("podnet: configuring %s: %w", ns, err)
	}
	if _, err := n.ip.run(ctx, "route", "add", n.cidr.String(), "via", node, "dev", n.uplink(), "onlink", "src", host); err != nil {
		return fmt.Errorf("podnet: routing %s to the pods (is another local node using this CIDR?): %w", n.cidr, err)
	}
	return nil
}

// Teardown removes every pod namespace, the node namespace and the uplink
// (with its host route), and releases the prefix.
func (n *Network) Teardown(ctx context.Context) error {
	n.mu.Lock()
	pods := make([]*Sandbox, 0, len(n.pods))
	for _, s := range n.pods {
		pods = append(pods, s)
	}
	n.mu.Unlock()
	var errs []error
	for _, s := range pods {
		errs = append(errs, n.RemovePod(ctx, s))
	}
	errs = append(errs, n.removeLeftovers(ctx))
	n.releaseLock()
	return errors.Join(errs...)
}

// lastUsable is the highest address of cidr that is not its broadcast address.
func lastUsable(cidr netip.Prefix) netip.Addr {
	a := cidr.Addr().As4()
	host := 32 - cidr.Bits()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= (1 << host) - 1
	v--
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
