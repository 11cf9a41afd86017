package podnet

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Sandbox is one pod's network namespace.
type Sandbox struct {
	// Name is the namespace's name (`ip netns`), derived from the IP.
	Name string
	// IP is the pod IP, on the namespace's eth0.
	IP netip.Addr
	// link is the node-side end of the pod's veth, in the node namespace.
	link string
}

// Path is the namespace's file, for setns and nsenter --net.
func (s *Sandbox) Path() string { return namespacePath(s.Name) }

// Do runs fn on a thread inside the pod's network namespace; processes it
// starts inherit the namespace.
func (s *Sandbox) Do(fn func() error) error { return inNamespace(s.Path(), fn) }

// AddPod creates a network namespace with the lowest free pod IP, wired to
// the node namespace.
func (n *Network) AddPod(ctx context.Context) (*Sandbox, error) {
	s, err := n.allocate()
	if err != nil {
		return nil, err
	}
	if err := n.wire(ctx, s); err != nil {
		return nil, errors.Join(err, n.RemovePod(context.WithoutCancel(ctx), s))
	}
	return s, nil
}

func (n *Network) allocate() (*Sandbox, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for a := n.nodeIP.Next(); a.IsValid() && a.Less(n.hostIP); a = a.Next() {
		if _, used := n.pods[a]; used {
			continue
		}
		offset := offsetIn(n.cidr, a)
		s := &Sandbox{
			Name: n.prefix + "-" + strings.ReplaceAll(a.String(), ".", "-"),
			IP:   a,
			link: fmt.Sprintf("p%x", offset),
		}
		n.pods[a] = s
		return s, nil
	}
	return nil, fmt.Errorf("podnet: no free pod IP in %s", n.cidr)
}

func (n *Network) wire(ctx context.Context, s *Sandbox) error {
	if _, err := n.ip.run(ctx, "netns", "add", s.Name); err != nil {
		return fmt.Errorf("podnet: %w", err)
	}
	node, pod := n.nodeIP.String(), s.IP.String()
	if err := n.ip.batch(ctx, n.nodeNamespace(), []string{
		fmt.Sprintf("link add %s type veth peer name eth0 netns %s", s.link, s.Name),
		fmt.Sprintf("addr add %s/32 dev %s", node, s.link),
		fmt.Sprintf("link set %s up", s.link),
		fmt.Sprintf("route add %s/32 dev %s src %s", pod, s.link, node),
	}); err != nil {
		return fmt.Errorf("podnet: wiring %s: %w", s.Name, err)
	}
	if err := n.ip.batch(ctx, s.Name, []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/32 dev eth0", pod),
		"link set eth0 up",
		fmt.Sprintf("route add %s dev eth0", node),
		fmt.Sprintf("route add default via %s dev eth0 src %s", node, pod),
	}); err != nil {
		return fmt.Errorf("podnet: configuring %s: %w", s.Name, err)
	}
	return nil
}

// RemovePod deletes the pod's namespace (killing any process left in it) and
// its veth, and frees its IP.
func (n *Network) RemovePod(ctx context.Context, s *Sandbox) error {
	var errs []error
	if n.linkExists(ctx, s.link) {
		if _, err := n.ip.run(ctx, "-n", n.nodeNamespace(), "link", "del", s.link); err != nil {
			errs = append(errs, fmt.Errorf("podnet: %w", err))
		}
	}
	if n.namespaceExists(ctx, s.Name) {
		errs = append(errs, n.deleteNamespace(ctx, s.Name))
	}
	n.mu.Lock()
	if n.pods[s.IP] == s {
		delete(n.pods, s.IP)
	}
	n.mu.Unlock()
	return errors.Join(errs...)
}

func (n *Network) linkExists(ctx context.Context, link string) bool {
	_, err := n.ip.run(ctx, "-n", n.nodeNamespace(), "link", "show", "dev", link)
	return err == nil
}

func (n *Network) namespaceExists(ctx context.Context, name string) bool {
	out, err := n.ip.run(ctx, "netns", "list")
	if err != nil {
		return true // let the delete report the error
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

func offsetIn(cidr netip.Prefix, a netip.Addr) uint32 {
	b, x := cidr.Addr().As4(), a.As4()
	base := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v := uint32(x[0])<<24 | uint32(x[1])<<16 | uint32(x[2])<<8 | uint32(x[3])
	return v - base
}
