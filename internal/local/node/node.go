package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/local/podnet"
)

// Node is a running local node.
type Node struct {
	opts    Options
	log     logr.Logger
	tools   tools
	client  kubernetes.Interface
	api     apiClient
	network *podnet.Network
	lb      *loadbalancer.Controller
	kubelet *http.Server
	fwds    []*loadbalancer.Proxy

	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder

	registeredAt metav1.Time
	cancel       context.CancelFunc // stops heartbeat, informers and workers
	heartbeatWG  sync.WaitGroup
	podInformers informers.SharedInformerFactory

	mu            sync.Mutex
	stopping      bool
	workers       map[types.UID]*podWorker
	workerWG      sync.WaitGroup
	createdMounts map[string]bool

	stopOnce sync.Once
	stopErr  error
	stopped  chan struct{}
}

// Start sets up the pod network, registers the Node and starts running the
// pods bound to it, until Stop is called or ctx ends.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Node, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t, err := findTools()
	if err != nil {
		return nil, err
	}
	for repo, r := range opts.Images {
		if len(r.Command) > 0 && filepath.IsAbs(r.Command[0]) {
			if _, err := os.Stat(r.Command[0]); err != nil {
				opts.Log.Info("image runner command is missing; pods using the image will not start",
					"image", repo, "command", r.Command[0], "hint", r.Hint)
			}
		}
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 100, 200
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("node: client: %w", err)
	}
	// Files of an earlier run's pods are stale: their processes are gone.
	if err := os.RemoveAll(filepath.Join(opts.StateDir, "pods")); err != nil {
		return nil, fmt.Errorf("node: clearing %s: %w", opts.StateDir, err)
	}
	n := &Node{
		opts: opts, log: opts.Log, tools: t, client: client, api: apiClient{client: client},
		workers: map[types.UID]*podWorker{}, createdMounts: map[string]bool{}, stopped: make(chan struct{}),
	}
	if err := n.start(ctx); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = n.Stop()
		case <-n.stopped:
		}
	}()
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	var err error
	if n.network, err = podnet.Setup(ctx, n.opts.Network); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := n.startKubeletServer(); err != nil {
		return err
	}
	if err := n.startHostForwards(); err != nil {
		return err
	}
	if err := n.register(ctx); err != nil {
		return err
	}
	lbOpts := n.opts.LoadBalancer
	if lbOpts.Log.GetSink() == nil {
		lbOpts.Log = n.log.WithName("loadbalancer")
	}
	if n.lb, err = loadbalancer.Start(ctx, n.client, lbOpts); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	n.startEvents(runCtx)
	n.heartbeatWG.Add(1)
	go func() {
		defer n.heartbeatWG.Done()
		n.heartbeat(runCtx)
	}()
	return n.startPods(runCtx)
}

// Name is the Node's name.
func (n *Node) Name() string { return n.opts.Name }

// IP is the node's InternalIP: its address in the pod network, reachable
// from the host and from pods.
func (n *Node) IP() netip.Addr { return n.network.NodeIP() }

// LoadBalancerAddress is the address given to a LoadBalancer Service.
func (n *Node) LoadBalancerAddress(namespace, name string) (netip.Addr, bool) {
	return n.lb.Address(namespace, name)
}

// CreatedMountPoints lists the directories and files the node created on
// the host because a container mounted a volume at a path that did not
// exist (the container sees the host's file system around its mounts).
func (n *Node) CreatedMountPoints() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.createdMounts))
	for p := range n.createdMounts {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (n *Node) noteCreatedMountPoints(paths []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range paths {
		if !n.createdMounts[p] {
			n.createdMounts[p] = true
			n.log.Info("created a mount point on the host", "path", p)
		}
	}
}

func (n *Node) podsDir() string { return filepath.Join(n.opts.StateDir, "pods") }

// Stop stops every pod's processes (within Options.StopGracePeriod), the
// load balancer and the kubelet endpoint, deletes the Node object and
// removes the pod network. Safe to call more than once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		defer close(n.stopped)
		var errs []error
		n.mu.Lock()
		n.stopping = true
		n.mu.Unlock()
		if n.cancel != nil {
			n.cancel()
		}
		n.workerWG.Wait()
		if n.podInformers != nil {
			n.podInformers.Shutdown()
		}
		n.heartbeatWG.Wait()
		if n.broadcaster != nil {
			n.broadcaster.Shutdown()
		}
		if n.lb != nil {
			n.lb.Stop()
		}
		for _, f := range n.fwds {
			f.Close()
		}
		if n.kubelet != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = n.kubelet.Shutdown(ctx)
			cancel()
			_ = n.kubelet.Close()
		}
		if n.registeredAt.Time != (time.Time{}) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			errs = append(errs, n.deregister(ctx))
			cancel()
		}
		if n.network != nil {
			errs = append(errs, n.network.Teardown(context.Background()))
		}
		errs = append(errs, os.RemoveAll(n.podsDir()))
		n.stopErr = errors.Join(errs...)
	})
	return n.stopErr
}

// startHostForwards serves each HostForward on the node address, forwarding
// to its target on the host.
func (n *Node) startHostForwards() error {
	for _, f := range n.opts.HostForwards {
		addr := net.JoinHostPort(n.network.NodeIP().String(), strconv.Itoa(f.Port))
		var ln net.Listener
		if err := n.network.InNode(func() (err error) { ln, err = net.Listen("tcp", addr); return err }); err != nil {
			return fmt.Errorf("node: host forward %s -> %s: %w", addr, f.Target, err)
		}
		p := loadbalancer.NewProxy(ln)
		p.SetBackends([]string{f.Target})
		n.fwds = append(n.fwds, p)
	}
	return nil
}
