package localrun

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/local/cluster"
	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/local/kubenode"
	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/scheme"
)

// Options configure a local runtime.
type Options struct {
	// Root is the repository root (bin/, config/).
	Root string
	// StateDir holds the cluster's and the node's state and logs.
	StateDir string
	// KubeconfigPath receives an admin kubeconfig.
	KubeconfigPath string
	// Prefix names the node's host link; CIDR is the node's network (pods
	// and the uplink, see kubenode.PlanNetwork).
	Prefix, CIDR string
	// NodeName names the node (and its cgroups).
	NodeName string
	// LoadBalancerCIDR is where LoadBalancer Services get their addresses
	// (inside 127.0.0.0/8; default 127.0.1.0/24). Runtimes running at the
	// same time need distinct ones.
	LoadBalancerCIDR string
	// ExperimentalHTTPRoute installs the experimental channel's HTTPRoute
	// CRD in place of the standard one (the other CRDs stay standard):
	// HTTPRoute's experimental fields, retry among them, reach Gatewall.
	ExperimentalHTTPRoute bool
	// ExperimentalChannel installs every CRD of the Gateway API's
	// experimental channel (the conformance suite refuses a mix of channels).
	ExperimentalChannel bool
	Log                 logr.Logger
}

// Runtime is a running local cluster: control plane, node, load balancer
// and cluster DNS. Deploy installs Gatewall into it.
type Runtime struct {
	Cluster      *cluster.Cluster
	Node         *kubenode.Node
	LoadBalancer *loadbalancer.Controller
	Config       *rest.Config
	Client       client.Client
	Clientset    kubernetes.Interface

	opts Options
}

//go:embed addons/coredns.yaml
var coreDNSManifest []byte

// Start starts the control plane, the node (images imported), the load
// balancer and the cluster DNS, with the Gateway API's and PLM's CRDs
// installed. Gatewall is not deployed yet: see Deploy.
func Start(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.Root == "" {
		return nil, errors.New("localrun: Options.Root is required")
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	network, err := kubenode.PlanNetwork(opts.CIDR)
	if err != nil {
		return nil, err
	}
	bundle, err := images.BundlePath(filepath.Join(opts.Root, "bin", "images"))
	if err != nil {
		return nil, err
	}
	gwCRDs, err := GatewayAPICRDDir()
	if err != nil {
		return nil, err
	}
	switch {
	case opts.ExperimentalChannel:
		gwCRDs = filepath.Join(filepath.Dir(gwCRDs), "experimental")
	case opts.ExperimentalHTTPRoute:
		if gwCRDs, err = withExperimentalHTTPRoute(gwCRDs, filepath.Join(opts.StateDir, "gateway-api-crds")); err != nil {
			return nil, err
		}
	}
	r := &Runtime{opts: opts}
	r.Cluster, err = cluster.Start(ctx, cluster.Options{
		BinDir:           filepath.Join(opts.Root, "bin"),
		WorkDir:          filepath.Join(opts.StateDir, "cluster"),
		KubeconfigPath:   opts.KubeconfigPath,
		AdvertiseAddress: network.NodeIP.String(),
		CRDDirs:          []string{filepath.Join(opts.Root, "config", "plm", "crd"), gwCRDs},
	})
	if err != nil {
		return nil, err
	}
	if err := r.start(ctx, bundle); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	return r, nil
}

func (r *Runtime) start(ctx context.Context, bundle string) error {
	o := r.opts
	r.Config = r.Cluster.Config()
	var err error
	if r.Client, err = client.New(r.Config, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	if r.Clientset, err = kubernetes.NewForConfig(r.Config); err != nil {
		return err
	}
	kubelet, err := r.Cluster.AddUser("system:node:"+o.NodeName, "system:nodes")
	if err != nil {
		return err
	}
	proxy, err := r.Cluster.AddUser("system:kube-proxy")
	if err != nil {
		return err
	}
	start := time.Now()
	r.Node, err = kubenode.Start(ctx, kubenode.Options{
		Name: o.NodeName, LinkPrefix: o.Prefix, CIDR: o.CIDR,
		StateDir: filepath.Join(o.StateDir, "node"), BinDir: filepath.Join(o.Root, "bin"),
		Images: []string{bundle}, PauseImage: images.Pause,
		Kubelet: kubelet, KubeProxy: proxy, KubeletCA: r.Cluster.KubeletCA(),
		Log: o.Log,
	})
	if err != nil {
		return err
	}
	o.Log.Info("node ready", "node", o.NodeName, "took", time.Since(start).Round(time.Millisecond))
	if r.LoadBalancer, err = loadbalancer.Start(ctx, r.Clientset, loadbalancer.Options{CIDR: o.LoadBalancerCIDR, Log: o.Log}); err != nil {
		return err
	}
	dns, err := manifest.Decode(coreDNSManifest)
	if err != nil {
		return err
	}
	if err := manifest.Apply(ctx, r.Client, "gatewall-local", dns); err != nil {
		return fmt.Errorf("localrun: installing the cluster DNS: %w", err)
	}
	return r.WaitDeployment(ctx, "kube-system", "coredns", 2*time.Minute)
}

// Stop stops the load balancer, the node (killing its pods) and the cluster.
func (r *Runtime) Stop() error {
	var errs []error
	if r.LoadBalancer != nil {
		r.LoadBalancer.Stop()
	}
	if r.Node != nil {
		errs = append(errs, r.Node.Stop())
	}
	if r.Cluster != nil {
		errs = append(errs, r.Cluster.Stop())
	}
	return errors.Join(errs...)
}
