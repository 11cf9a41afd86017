package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gatewall/gatewall/internal/localrun"
)

// LocalRuntime says where a test package's local runtime lives. Packages
// whose runtimes may run at the same time (go test runs packages in
// parallel) need distinct names, prefixes and networks. In use (podnet
// refuses a pod CIDR overlapping another node's):
//
//	test/local        gwlt 10.245.0.0/16  127.0.1.0/24   (its stop test: gwls 10.248.0.0/24 127.0.4.0/24)
//	test/e2e          gwle 10.246.0.0/16  127.0.2.0/24
//	test/conformance  gwlc 10.247.0.0/16  127.0.3.0/24
//	internal/local/podnet tests  gwlpt 10.251.0.0/24
//	make run-local    gwl  10.244.0.0/16  127.0.1.0/24
type LocalRuntime struct {
	// Name names the state directory under the temp dir.
	Name string
	// Prefix names network namespaces and links; CIDR is the pod network;
	// LoadBalancerCIDR gives LoadBalancer Services their addresses.
	Prefix, CIDR, LoadBalancerCIDR string
}

// localRuntimeBins are the tools the local runtime runs, all in bin/.
var localRuntimeBins = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd",
	"nginx-agent", "echo-basic", "ngx_http_app_protect_module.so"}

// Start starts the local runtime (cluster, played node) and Gatewall's
// manager. Logs of the manager and the runtime go to manager.log in the
// state directory, printed on stderr. stop stops everything.
func (l LocalRuntime) Start() (rt *localrun.Runtime, stop func(), err error) {
	if os.Geteuid() != 0 {
		return nil, nil, fmt.Errorf("%s: the local runtime needs root (network and mount namespaces)", l.Name)
	}
	root := RepoRoot()
	for _, b := range localRuntimeBins {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			return nil, nil, fmt.Errorf("%s: bin/%s is missing: run `make tools`", l.Name, b)
		}
	}
	state := filepath.Join(os.TempDir(), "gatewall-"+l.Name)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return nil, nil, err
	}
	logFile, err := os.Create(filepath.Join(state, "manager.log"))
	if err != nil {
		return nil, nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile), zap.UseDevMode(true)))
	fmt.Fprintf(os.Stderr, "%s: manager and runtime logs in %s\n", l.Name, logFile.Name())
	rt, err = localrun.Start(context.Background(), localrun.Options{
		Root: root, StateDir: state, KubeconfigPath: filepath.Join(state, "kubeconfig"),
		Prefix: l.Prefix, CIDR: l.CIDR, LoadBalancerCIDR: l.LoadBalancerCIDR, NodeName: l.Name + "-node",
		Log: ctrl.Log.WithName("local"),
	})
	if err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("%s: starting the local runtime: %w", l.Name, err)
	}
	stop = func() {
		if err := rt.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping: %v\n", l.Name, err)
		}
		logFile.Close()
	}
	if err := rt.StartManager(rt.ManagerOptions()); err != nil {
		stop()
		return nil, nil, fmt.Errorf("%s: starting the manager: %w", l.Name, err)
	}
	return rt, stop, nil
}
