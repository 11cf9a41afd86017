package kubenode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// containerdConfig is containerd's configuration: its state in the node's
// /var/lib and /run (private to the node), the CRI with runc on cgroupfs and
// the CNI plugins of Debian's containernetworking-plugins. The sandbox has no
// CAP_SYS_RESOURCE: without restrict_oom_score_adj every pod sandbox fails
// to start ("can't get final child's PID from pipe: EOF").
const containerdConfig = `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "/var/lib/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = "/var/lib/cni/net.d"
`

// containerdSocket is containerd's socket inside the node.
const containerdSocket = "/run/containerd/containerd.sock"

// cniConfig is the pod network: a bridge with host-local addresses from the
// node's pod subnet (the bridge is the pods' gateway; hairpin lets a pod
// reach itself through a Service), and portmap for hostPorts.
const cniConfig = `{
  "cniVersion": "0.4.0",
  "name": "gatewall",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q, "gateway": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "/var/lib/cni/networks"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// startContainerd writes containerd's and CNI's configuration, starts
// containerd and waits for it to answer.
func startContainerd(ctx context.Context, s *sandbox, o Options) (*daemon, error) {
	conf := filepath.Join(o.StateDir, "containerd.toml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, containerdConfig, o.PauseImage, o.CNIBinDir), 0o644); err != nil {
		return nil, err
	}
	netDir := filepath.Join(o.StateDir, "cni", "net.d")
	if err := os.MkdirAll(netDir, 0o755); err != nil {
		return nil, err
	}
	cni := fmt.Appendf(nil, cniConfig, o.network.Pods.String(), o.network.Gateway.String())
	if err := os.WriteFile(filepath.Join(netDir, "10-gatewall.conflist"), cni, 0o644); err != nil {
		return nil, err
	}
	d, err := startDaemon(s, o.LogDir, "containerd", "--config", conf)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := exec.CommandContext(ctx, "ctr", "--address", s.path(containerdSocket), "version").Run()
		if err == nil {
			return d, nil
		}
		if aerr := d.alive(); aerr != nil {
			return nil, aerr
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = d.stop(time.Second)
			return nil, fmt.Errorf("kubenode: containerd did not answer within 30s; see %s", d.logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// importImages loads docker-archives into containerd's k8s.io namespace (the
// CRI's), so that pods find them without pulling.
func importImages(ctx context.Context, s *sandbox, archives []string) error {
	for _, a := range archives {
		out, err := exec.CommandContext(ctx, "ctr", "--address", s.path(containerdSocket), "-n", "k8s.io",
			"images", "import", a).CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubenode: importing image archive %s: %w: %s", a, err, out)
		}
	}
	return nil
}
