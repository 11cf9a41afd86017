package kubenode

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"

	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/local/netns"
)

// setupUplink links the sandbox to the host with a veth pair: link on the
// host (HostIP/30, and a route to the pod subnet through the node), eth0 in
// the node (NodeIP/30, default route to the host). The node forwards between
// the uplink and the pods' bridge; the host forwards nothing.
func setupUplink(ctx context.Context, s *sandbox, link string, n Network) error {
	uplink := func(a fmt.Stringer) string { return a.String() + "/30" }
	if err := ipBatch(ctx, nil, []string{
		fmt.Sprintf("link add %s type veth peer name eth0 netns %d", link, s.pid),
		fmt.Sprintf("addr add %s dev %s", uplink(n.HostIP), link),
		fmt.Sprintf("link set %s up", link),
	}); err != nil {
		return err
	}
	if err := ipBatch(ctx, s, []string{
		"link set lo up",
		fmt.Sprintf("addr add %s dev eth0", uplink(n.NodeIP)),
		"link set eth0 up",
		fmt.Sprintf("route add default via %s", n.HostIP),
	}); err != nil {
		return err
	}
	if err := ipBatch(ctx, nil, []string{fmt.Sprintf("route add %s via %s dev %s", n.Pods, n.NodeIP, link)}); err != nil {
		return err
	}
	// Per-namespace settings: forward between the uplink and the bridge, and
	// let iptables (kube-proxy's Service rules) see traffic between pods on
	// the bridge.
	return s.run(ctx, "/bin/sh", "-c", "echo 1 >/proc/sys/net/ipv4/ip_forward && echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables")
}

// ipBatch runs ip commands in one `ip -batch`, in the sandbox or (nil) on the host.
func ipBatch(ctx context.Context, s *sandbox, lines []string) error {
	var cmd *exec.Cmd
	if s == nil {
		cmd = exec.CommandContext(ctx, "ip", "-batch", "-")
	} else {
		cmd = s.command("ip", "-batch", "-")
	}
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		where := "on the host"
		if s != nil {
			where = "in the node"
		}
		return fmt.Errorf("kubenode: ip -batch %s: %w: %s\ncommands:\n%s", where, err, strings.TrimSpace(out.String()), strings.Join(lines, "\n"))
	}
	return nil
}

// deleteLink removes a host link left by a crashed run (a link whose peer
// still lived); it is not an error if there is none.
func deleteLink(ctx context.Context, link string) error {
	if err := exec.CommandContext(ctx, "ip", "link", "show", link).Run(); err != nil {
		return nil
	}
	out, err := exec.CommandContext(ctx, "ip", "link", "del", link).CombinedOutput()
	if err != nil && exec.CommandContext(ctx, "ip", "link", "show", link).Run() == nil {
		return fmt.Errorf("kubenode: deleting link %s: %w: %s", link, err, out)
	}
	// Gone either way: the kernel removes the pair with the node's namespace.
	return nil
}

// forward listens on the node's address, on target's port, inside the
// sandbox and forwards every connection to target, an address on the host's
// loopback.
func forward(s *sandbox, nodeIP string, target string) (*loadbalancer.Proxy, error) {
	_, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("kubenode: forwarding to %q: %w", target, err)
	}
	addr := net.JoinHostPort(nodeIP, port)
	var ln net.Listener
	if err := netns.Do(s.nsPath("net"), func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
		return nil, fmt.Errorf("kubenode: forwarding %s to %s: %w", addr, target, err)
	}
	p := loadbalancer.NewProxy(ln)
	p.SetBackends([]string{target})
	return p, nil
}
