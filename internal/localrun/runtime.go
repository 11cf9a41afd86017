package localrun

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

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/local/cluster"
	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/local/node"
	"github.com/gatewall/gatewall/internal/local/podnet"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/scheme"
)

// AgentAlias is the name pods reach Gatewall's agent server by (an
// /etc/hosts entry for the node's address, forwarded to the host).
const AgentAlias = "gatewall-agent"

// agentNodePort is the port of the agent server on the node's address.
const agentNodePort = 8443

// Options configure a local runtime.
type Options struct {
	// Root is the repository root (bin/, build/, config/).
	Root string
	// StateDir holds the cluster's and node's state and logs.
	StateDir string
	// KubeconfigPath receives an admin kubeconfig.
	KubeconfigPath string
	// Prefix names the network namespaces and links; CIDR is the pod network.
	Prefix, CIDR string
	// NodeName names the played node.
	NodeName string
	// LoadBalancerCIDR is where LoadBalancer Services get their addresses
	// (inside 127.0.0.0/8; default 127.0.1.0/24). Runtimes running at the
	// same time need distinct ones.
	LoadBalancerCIDR string
	Log              logr.Logger
}

// Runtime is a running local cluster, node and manager.
type Runtime struct {
	Cluster *cluster.Cluster
	Node    *node.Node
	Config  *rest.Config
	Client  client.Client

	opts      Options
	agentAddr string
	mu        sync.Mutex
	stopMgr   func()
}

// Start starts the cluster and the node, and installs the CRDs.
func Start(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.Root == "" {
		return nil, errors.New("localrun: Options.Root is required")
	}
	gwCRDs, err := gatewayAPICRDs()
	if err != nil {
		return nil, err
	}
	c, err := cluster.Start(ctx, cluster.Options{
		BinDir:         filepath.Join(opts.Root, "bin"),
		WorkDir:        filepath.Join(opts.StateDir, "cluster"),
		KubeconfigPath: opts.KubeconfigPath,
		CRDDirs: []string{
			filepath.Join(opts.Root, "config", "crd", "bases"),
			filepath.Join(opts.Root, "config", "plm", "crd"),
			gwCRDs,
		},
	})
	if err != nil {
		return nil, err
	}
	agentAddr, err := freeLoopbackAddr()
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	n, err := node.Start(ctx, c.Config(), node.Options{
		Name:         opts.NodeName,
		StateDir:     filepath.Join(opts.StateDir, "node"),
		Images:       images(opts.Root),
		KubeletCA:    c.KubeletCA(),
		Network:      podnet.Options{Prefix: opts.Prefix, CIDR: opts.CIDR},
		HostForwards: []node.HostForward{{Port: agentNodePort, Target: agentAddr}},
		NodeAliases:  []string{AgentAlias},
		LoadBalancer: loadbalancer.Options{CIDR: opts.LoadBalancerCIDR},
		Log:          opts.Log,
	})
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	cl, err := client.New(c.Config(), client.Options{Scheme: scheme.New()})
	if err != nil {
		_ = n.Stop()
		_ = c.Stop()
		return nil, err
	}
	return &Runtime{Cluster: c, Node: n, Config: c.Config(), Client: cl, opts: opts, agentAddr: agentAddr}, nil
}

// ManagerOptions are the manager's options for this runtime: it serves the
// agents on a host loopback address the node forwards pods to, and NGINX
// loads the App Protect test double.
func (r *Runtime) ManagerOptions() manager.Options {
	return manager.Options{
		ControllerName:   manager.DefaultControllerName,
		GatewayClassName: manager.DefaultGatewayClassName,
		Namespace:        manager.DefaultNamespace,
		MetricsAddr:      "0",
		ProbeAddr:        "0",
		Agent: manager.AgentOptions{
			ListenAddress:          r.agentAddr,
			ServerAddress:          fmt.Sprintf("%s:%d", AgentAlias, agentNodePort),
			TLSSecret:              "gatewall-agent-tls",
			Images:                 defaultImages(),
			ReloadMonitoringPeriod: time.Second,
		},
		WAFModule: filepath.Join(r.opts.Root, "bin", "ngx_http_app_protect_module.so"),
	}
}

// StartManager starts Gatewall's manager with opts until StopManager.
func (r *Runtime) StartManager(opts manager.Options) error {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}
	if err := r.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	mgr, err := manager.New(r.Config, opts)
	if err != nil {
		return err
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	r.mu.Lock()
	r.stopMgr = func() {
		cancel()
		if err := <-done; err != nil && r.opts.Log.GetSink() != nil {
			r.opts.Log.Error(err, "manager stopped with an error")
		}
	}
	r.mu.Unlock()
	return nil
}

// StopManager stops the manager (the data planes keep running).
func (r *Runtime) StopManager() {
	r.mu.Lock()
	stop := r.stopMgr
	r.stopMgr = nil
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Stop stops the manager, the node (killing its pods) and the cluster.
func (r *Runtime) Stop() error {
	r.StopManager()
	return errors.Join(r.Node.Stop(), r.Cluster.Stop())
}

// freeLoopbackAddr picks a free port on 127.0.0.1.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// gatewayAPICRDs is the directory of the Gateway API's standard CRDs in the
// module cache.
func gatewayAPICRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return "", fmt.Errorf("locating the gateway-api module (go list -m): %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	return dir, nil
}
