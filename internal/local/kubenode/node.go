package kubenode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gatewall/gatewall/internal/local/loadbalancer"
)

// nodePath is the PATH of the node's daemons (iptables and runc are in sbin).
const nodePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lookPath finds a program as the node's daemons do.
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(nodePath) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Node is a running node.
type Node struct {
	opts       Options
	cgroups    cgroupTree
	sandbox    *sandbox
	apiForward *loadbalancer.Proxy
	mu         sync.Mutex
	forwards   []*loadbalancer.Proxy // Forward's
	daemons    []*daemon             // containerd, kubelet, kube-proxy: stopped in reverse
	watchdog   *exec.Cmd
	stopOnce   sync.Once
	stopErr    error
}

// Start starts the node and waits until its Node is Ready. It first removes
// what a crashed run with the same name and link prefix left behind.
func Start(ctx context.Context, opts Options) (*Node, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	cg, err := newCgroupTree(o.cgroupName())
	if err != nil {
		return nil, err
	}
	n := &Node{opts: o, cgroups: cg}
	if err := n.removeLeftovers(ctx); err != nil {
		return nil, err
	}
	if err := routeFree(ctx, o.network.Pods.String()); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(o.StateDir); err != nil {
		return nil, fmt.Errorf("kubenode: emptying %s: %w", o.StateDir, err)
	}
	for _, d := range []string{o.StateDir, o.LogDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := n.start(ctx); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	o := n.opts
	if err := n.cgroups.create(daemonsCgroup); err != nil {
		return err
	}
	var err error
	if n.watchdog, err = startWatchdog(n.cgroups); err != nil {
		return err
	}
	if n.sandbox, err = startSandbox(n.cgroups); err != nil {
		return err
	}
	step := func(name string, fn func(context.Context) error) error {
		start := time.Now()
		sctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
		defer cancel()
		if err := fn(sctx); err != nil {
			return err
		}
		o.Log.Info("node: "+name, "took", time.Since(start).Round(time.Millisecond))
		return nil
	}
	if err := step("mounts", func(ctx context.Context) error { return setupMounts(ctx, n.sandbox, o.StateDir) }); err != nil {
		return err
	}
	if err := step("uplink", func(ctx context.Context) error {
		return setupUplink(ctx, n.sandbox, o.link(), o.network)
	}); err != nil {
		return err
	}
	if n.apiForward, err = forward(n.sandbox, o.network.NodeIP.String(), o.apiServerTarget()); err != nil {
		return err
	}
	if err := step("containerd", func(ctx context.Context) error {
		d, err := startContainerd(ctx, n.sandbox, o)
		if err != nil {
			return err
		}
		n.daemons = append(n.daemons, d)
		return importImages(ctx, n.sandbox, o.Images)
	}); err != nil {
		return err
	}
	return step("kubelet", func(ctx context.Context) error {
		d, err := startKubelet(n.sandbox, o)
		if err != nil {
			return err
		}
		n.daemons = append(n.daemons, d)
		if d, err = startKubeProxy(n.sandbox, o); err != nil {
			return err
		}
		n.daemons = append(n.daemons, d)
		return n.waitReady(ctx)
	})
}

// waitReady waits until the kubelet has registered the Node and it is Ready.
func (n *Node) waitReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(n.opts.Kubelet)
	if err != nil {
		return err
	}
	var last string
	for {
		node, err := cs.CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					last = c.Message
				}
			}
		}
		for _, d := range n.daemons {
			if err := d.alive(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubenode: node %s not Ready (%s): %w; see the logs in %s", n.opts.Name, last, ctx.Err(), n.opts.LogDir)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Name is the Node's name.
func (n *Node) Name() string { return n.opts.Name }

// Network is the node's addressing.
func (n *Node) Network() Network { return n.opts.network }

// LogDir holds the daemons' logs.
func (n *Node) LogDir() string { return n.opts.LogDir }

// NetNS is the path of the node's network namespace (for netns.Do), where
// kube-proxy's rules take a Service's cluster IP to its endpoints: the
// host has no route to cluster IPs.
func (n *Node) NetNS() string { return n.sandbox.nsPath("net") }

// Stop stops the node: kube-proxy and the kubelet are asked to stop, then
// every process left in the node's cgroups (containerd, its shims, the
// pods) is killed, and the cgroups, the uplink and the node's state (but for
// the daemons' and the pods' logs) are removed. It is safe to call more than once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		var errs []error
		for i := len(n.daemons) - 1; i >= 1; i-- { // kube-proxy, kubelet; containerd is killed with the pods
			errs = append(errs, n.daemons[i].stop(5*time.Second))
		}
		if n.apiForward != nil {
			n.apiForward.Close()
		}
		n.mu.Lock()
		for _, f := range n.forwards {
			f.Close()
		}
		n.mu.Unlock()
		errs = append(errs, n.cgroups.kill(30*time.Second))
		for _, d := range n.daemons {
			<-d.exited
		}
		errs = append(errs, n.cgroups.remove(), deleteLink(context.Background(), n.opts.link()))
		if n.watchdog != nil {
			_ = n.watchdog.Process.Kill()
		}
		for _, m := range stateMounts {
			if !m.logs {
				errs = append(errs, os.RemoveAll(filepath.Join(n.opts.StateDir, m.state)))
			}
		}
		n.stopErr = errors.Join(errs...)
	})
	return n.stopErr
}

// removeLeftovers kills and removes what a crashed run of this node left:
// its processes, cgroups and uplink.
func (n *Node) removeLeftovers(ctx context.Context) error {
	if n.cgroups.exists() {
		n.opts.Log.Info("node: removing the leftovers of an earlier run", "cgroup", n.cgroups.Name)
		if err := n.cgroups.kill(30 * time.Second); err != nil {
			return err
		}
		if err := n.cgroups.remove(); err != nil {
			return err
		}
	}
	return deleteLink(ctx, n.opts.link())
}

// routeFree fails when the host already routes the pod subnet (another
// node with the same network is running).
func routeFree(ctx context.Context, subnet string) error {
	out, err := exec.CommandContext(ctx, "ip", "-4", "route", "show", "exact", subnet).Output()
	if err != nil {
		return fmt.Errorf("kubenode: ip route: %w", err)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return fmt.Errorf("kubenode: the host already routes %s (%s): another node uses this network", subnet, s)
	}
	return nil
}

// link is the host end of the uplink.
func (o Options) link() string { return o.LinkPrefix + "-up" }

// Forward makes target, an address on the host's loopback (a test server,
// say), reachable from pods at the node's address on the same port, until
// the node stops. It returns that address.
func (n *Node) Forward(target string) (string, error) {
	p, err := forward(n.sandbox, n.opts.network.NodeIP.String(), target)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	n.forwards = append(n.forwards, p)
	n.mu.Unlock()
	_, port, _ := net.SplitHostPort(target)
	return net.JoinHostPort(n.opts.network.NodeIP.String(), port), nil
}
