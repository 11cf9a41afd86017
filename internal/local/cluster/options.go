package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// requiredBinaries are the binaries the control plane runs and the scripts
// that build them.
func requiredBinaries() []binary {
	return []binary{
		{name: "etcd", script: "hack/etcd.sh"},
		{name: "kube-apiserver", script: "hack/kube.sh kube-apiserver"},
		{name: "kube-controller-manager", script: "hack/kube.sh kube-controller-manager"},
		{name: "kube-scheduler", script: "hack/kube.sh kube-scheduler"},
	}
}

type binary struct{ name, script string }

// Options configure a local control plane.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and
	// kube-scheduler (the repository's bin/).
	BinDir string
	// WorkDir holds the control plane's state (certificates, etcd data). It
	// also identifies the cluster: Start kills processes left running by an
	// earlier run that crashed with the same WorkDir. Emptied at every start;
	// it must be new, empty, or the WorkDir of an earlier run.
	WorkDir string
	// LogDir receives one log file per component. Defaults to WorkDir/logs.
	LogDir string
	// KubeconfigPath, when set, receives an admin (system:masters) kubeconfig.
	KubeconfigPath string
	// CRDDirs are directories of CustomResourceDefinition manifests to install.
	CRDDirs []string
	// ServiceCIDR is the Service cluster IP range. Defaults to 10.96.0.0/16.
	ServiceCIDR string
	// AdvertiseAddress is the address the API server publishes as the
	// `kubernetes` Service's endpoint: where pods reach it (a node forwards it
	// to the API server's loopback address). It is also in the serving
	// certificate. Defaults to 127.0.0.1 (no pod reaches it).
	AdvertiseAddress string
	// StartTimeout bounds the start of each component. Defaults to 60s.
	StartTimeout time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.BinDir == "" || o.WorkDir == "" {
		return o, errors.New("cluster: Options.BinDir and Options.WorkDir are required")
	}
	var err error
	if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
		return o, fmt.Errorf("cluster: resolving work dir: %w", err)
	}
	if o.BinDir, err = filepath.Abs(o.BinDir); err != nil {
		return o, fmt.Errorf("cluster: resolving bin dir: %w", err)
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.WorkDir, "logs")
	}
	if o.ServiceCIDR == "" {
		o.ServiceCIDR = "10.96.0.0/16"
	}
	if o.AdvertiseAddress == "" {
		o.AdvertiseAddress = "127.0.0.1"
	}
	if net.ParseIP(o.AdvertiseAddress) == nil {
		return o, fmt.Errorf("cluster: advertise address %q is not an IP address", o.AdvertiseAddress)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	for _, b := range requiredBinaries() {
		if _, err := os.Stat(filepath.Join(o.BinDir, b.name)); err != nil {
			return o, fmt.Errorf("cluster: %s not found in %s: run `%s` to build it", b.name, o.BinDir, b.script)
		}
	}
	return o, nil
}
