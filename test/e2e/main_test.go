// Package e2e runs Gatewall end to end on the local runtime: a real API
// server, kube-controller-manager and kube-scheduler, a played node running
// pods as host processes (the data plane as the real NGINX and nginx-agent),
// and Gatewall's manager. Traffic goes from the test through the Gateway's
// load-balancer address to NGINX to echo backends.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/test/testenv"
)

var rt *localrun.Runtime

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: the local runtime needs root (network and mount namespaces)")
		return 1
	}
	root := testenv.RepoRoot()
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "nginx-agent", "echo-basic", "ngx_http_app_protect_module.so"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: bin/%s is missing: run `make tools`\n", b)
			return 1
		}
	}
	state := filepath.Join(os.TempDir(), "gatewall-e2e")
	if err := os.MkdirAll(state, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// The manager's and the runtime's logs go to a file, to read when a test fails.
	logFile, err := os.Create(filepath.Join(state, "manager.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer logFile.Close()
	ctrl.SetLogger(zap.New(zap.WriteTo(logFile), zap.UseDevMode(true)))
	fmt.Fprintln(os.Stderr, "e2e: manager logs in", logFile.Name())
	rt, err = localrun.Start(context.Background(), localrun.Options{
		Root: root, StateDir: state, KubeconfigPath: filepath.Join(state, "kubeconfig"),
		Prefix: "gwle", CIDR: "10.246.0.0/16", NodeName: "e2e-node", Log: ctrl.Log.WithName("local"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the local runtime:", err)
		return 1
	}
	defer func() {
		if err := rt.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: stopping:", err)
		}
	}()
	if err := rt.StartManager(rt.ManagerOptions()); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the manager:", err)
		return 1
	}
	return m.Run()
}
