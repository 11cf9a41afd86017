package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/local/pki"
	"github.com/gatewall/gatewall/internal/local/podnet"
)

// Options configure a local node.
type Options struct {
	// Name is the Node's name. Defaults to "gatewall-local".
	Name string
	// StateDir holds the pods' files: rendered volumes, /etc/hosts, logs and
	// container-ID directories. Emptied at start. Required.
	StateDir string
	// Images maps image repositories to the host commands that play them;
	// start from DefaultImages. Required.
	Images Images
	// KubeletCA issues the node's serving certificate and verifies the API
	// server's client certificate (cluster.Cluster.KubeletCA). Required.
	KubeletCA *pki.CA
	// Network names the pod network's namespaces and sets its CIDR.
	Network podnet.Options
	// LoadBalancer sets the addresses given to LoadBalancer Services.
	LoadBalancer loadbalancer.Options
	// KubeletPort is the node's kubelet endpoint port (on the node address
	// inside the pod network). Defaults to 10250.
	KubeletPort int
	// HostForwards let pods reach services on the host's loopback through the
	// node address (the pods' gateway).
	HostForwards []HostForward
	// NodeAliases are host names that resolve to the node address in every
	// pod's /etc/hosts: with HostForwards, how pods reach a service running
	// on the host (say, the controller the data plane connects to) by name.
	NodeAliases []string
	// ExtraHosts are /etc/hosts lines ("IP name...") added to every pod.
	ExtraHosts []string
	// RestartBackoff and MaxRestartBackoff bound the delay before restarting
	// a crashed container after its first restart. Default 10s and 5m.
	RestartBackoff, MaxRestartBackoff time.Duration
	// StopGracePeriod caps the pods' grace period when the node stops.
	// Defaults to 5s.
	StopGracePeriod time.Duration
	// ResyncPeriod is how often every pod is reconciled without a change.
	// Defaults to 10s.
	ResyncPeriod time.Duration
	// VolumeResyncPeriod is how often ConfigMap, Secret and projected volumes
	// are re-rendered. Defaults to 30s.
	VolumeResyncPeriod time.Duration
	// HeartbeatPeriod is how often the Node status and Lease are renewed.
	// Defaults to 10s.
	HeartbeatPeriod time.Duration
	// Log receives the node's log. Defaults to discarding.
	Log logr.Logger
}

// HostForward makes Target (an address on the host, normally loopback)
// reachable from pods at the node address and Port.
type HostForward struct {
	Port   int
	Target string
}

func (o Options) withDefaults() (Options, error) {
	if o.StateDir == "" || o.Images == nil || o.KubeletCA == nil {
		return o, errors.New("node: Options.StateDir, Options.Images and Options.KubeletCA are required")
	}
	var err error
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return o, fmt.Errorf("node: resolving state dir: %w", err)
	}
	if o.Name == "" {
		o.Name = "gatewall-local"
	}
	if o.KubeletPort == 0 {
		o.KubeletPort = 10250
	}
	setDefault(&o.RestartBackoff, 10*time.Second)
	setDefault(&o.MaxRestartBackoff, 5*time.Minute)
	setDefault(&o.StopGracePeriod, 5*time.Second)
	setDefault(&o.ResyncPeriod, 10*time.Second)
	setDefault(&o.VolumeResyncPeriod, 30*time.Second)
	setDefault(&o.HeartbeatPeriod, 10*time.Second)
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if os.Geteuid() != 0 {
		return o, errors.New("node: the local node needs root (network, mount and PID namespaces)")
	}
	return o, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d == 0 {
		*d = v
	}
}
