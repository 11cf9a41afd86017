package kubenode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/gatewall/gatewall/internal/pki/issuer"
)

// Options configure a node.
type Options struct {
	// Name is the Node's name; it also names the node's cgroup tree
	// (/gatewall-<name>). Lowercase letters, digits and '-'.
	Name string
	// LinkPrefix names the host end of the uplink (<prefix>-up); at most 12
	// characters.
	LinkPrefix string
	// CIDR is the node's network (see PlanNetwork).
	CIDR string
	// StateDir holds containerd's, the kubelet's and CNI's state; emptied at
	// start. It must not be under /run, /var/lib or /var/log, which the node
	// mounts over.
	StateDir string
	// LogDir receives one log per daemon. Defaults to StateDir/logs.
	LogDir string
	// BinDir holds kubelet and kube-proxy (the repository's bin/).
	BinDir string
	// CNIBinDir holds the CNI plugins. Defaults to Debian's /usr/lib/cni.
	CNIBinDir string
	// Images are docker-archives imported into containerd before the kubelet
	// starts (package images); PauseImage, one of them, is the sandbox image.
	Images     []string
	PauseImage string
	// Kubelet and KubeProxy are the API server's address (on the host's
	// loopback; the node reaches it through a forward on its own address)
	// and the credentials of the kubelet (user system:node:<Name>, group
	// system:nodes) and of kube-proxy (system:kube-proxy).
	Kubelet, KubeProxy *rest.Config
	// KubeletCA issues the kubelet's serving certificate and signed the API
	// server's kubelet client certificate (cluster.Cluster.KubeletCA).
	KubeletCA *issuer.CA
	// ClusterDNS and ClusterDomain are given to pods. Default 10.96.0.10 and
	// cluster.local.
	ClusterDNS, ClusterDomain string
	// StartTimeout bounds each step of the start. Defaults to 60s.
	StartTimeout time.Duration
	// Log receives the node's progress. Defaults to discarding.
	Log logr.Logger

	network Network
}

var nodeName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)

// hiddenDirs are mounted over in the node: its state cannot live there.
var hiddenDirs = []string{"/run", "/var/lib", "/var/log"}

func (o Options) withDefaults() (Options, error) {
	if !nodeName.MatchString(o.Name) {
		return o, fmt.Errorf("kubenode: node name %q: lowercase letters, digits and '-', at most 40", o.Name)
	}
	if o.LinkPrefix == "" || len(o.LinkPrefix) > 12 {
		return o, fmt.Errorf("kubenode: link prefix %q: 1 to 12 characters", o.LinkPrefix)
	}
	if o.StateDir == "" || o.BinDir == "" || o.Kubelet == nil || o.KubeProxy == nil || o.KubeletCA == nil || o.PauseImage == "" {
		return o, errors.New("kubenode: Options.StateDir, BinDir, Kubelet, KubeProxy, KubeletCA and PauseImage are required")
	}
	var err error
	if o.network, err = PlanNetwork(o.CIDR); err != nil {
		return o, err
	}
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return o, err
	}
	for _, d := range hiddenDirs {
		if o.StateDir == d || strings.HasPrefix(o.StateDir, d+"/") {
			return o, fmt.Errorf("kubenode: state directory %s is under %s, which the node mounts over", o.StateDir, d)
		}
	}
	if o.BinDir, err = filepath.Abs(o.BinDir); err != nil {
		return o, err
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.StateDir, "logs")
	}
	if o.CNIBinDir == "" {
		o.CNIBinDir = "/usr/lib/cni"
	}
	if o.ClusterDNS == "" {
		o.ClusterDNS = "10.96.0.10"
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = "cluster.local"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if os.Geteuid() != 0 {
		return o, errors.New("kubenode: a node needs root (namespaces, cgroups, containerd)")
	}
	return o, requireTools(o)
}

// tool is a program the node runs and how to get it.
type tool struct{ path, hint string }

// requireTools fails with the command that installs the first missing tool.
func requireTools(o Options) error {
	apt := "run hack/node-packages.sh (or `make tools`)"
	tools := []tool{
		{filepath.Join(o.BinDir, "kubelet"), "run `hack/kube.sh kubelet` (or `make tools`)"},
		{filepath.Join(o.BinDir, "kube-proxy"), "run `hack/kube.sh kube-proxy` (or `make tools`)"},
		{"containerd", apt}, {"containerd-shim-runc-v2", apt}, {"runc", apt}, {"ctr", apt},
		{"iptables", apt}, {"conntrack", apt}, {"nsenter", "install util-linux"}, {"unshare", "install util-linux"},
		{"ip", "install iproute2"},
		{filepath.Join(o.CNIBinDir, "bridge"), apt}, {filepath.Join(o.CNIBinDir, "host-local"), apt},
		{filepath.Join(o.CNIBinDir, "portmap"), apt},
	}
	for _, t := range tools {
		if filepath.IsAbs(t.path) {
			if _, err := os.Stat(t.path); err != nil {
				return fmt.Errorf("kubenode: %s is missing: %s", t.path, t.hint)
			}
			continue
		}
		if _, err := lookPath(t.path); err != nil {
			return fmt.Errorf("kubenode: %s is not on PATH: %s", t.path, t.hint)
		}
	}
	for _, a := range o.Images {
		if _, err := os.Stat(a); err != nil {
			return fmt.Errorf("kubenode: image archive %s is missing: run `make images`", a)
		}
	}
	return nil
}
