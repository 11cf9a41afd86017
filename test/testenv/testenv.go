// Package testenv starts a real API server (envtest: kube-apiserver and etcd
// built by hack/) with every CRD Gatewall's tests need: Gatewall's own, the
// PLM stand-ins, and the Gateway API's standard CRDs from the gateway-api module.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/internal/scheme"
)

// Env is a running API server and a client for it.
type Env struct {
	Config *rest.Config
	Client client.Client
	env    *envtest.Environment
}

// RepoRoot is the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// AssetsDir is where kube-apiserver and etcd are: $KUBEBUILDER_ASSETS, else bin/.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make tools` (or `make test`) to build the envtest binaries", b, dir)
		}
	}
	return dir, nil
}

// Start starts an API server with the CRDs installed. The caller stops it.
func Start() (*Env, error) { return StartWithout() }

// StartWithout starts an API server with the CRDs installed but those of
// the files named (base names of CRD files of config/plm/crd or the Gateway
// API's): the optional APIs a test installs later.
func StartWithout(files ...string) (*Env, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	gwCRDs, err := localrun.GatewayAPICRDDir()
	if err != nil {
		return nil, err
	}
	root := RepoRoot()
	paths := []string{filepath.Join(root, "config", "crd", "bases")}
	for _, dir := range []string{filepath.Join(root, "config", "plm", "crd"), gwCRDs} {
		if len(files) == 0 {
			paths = append(paths, dir)
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && !slices.Contains(files, e.Name()) {
				paths = append(paths, filepath.Join(dir, e.Name()))
			}
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     paths,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme.New(),
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Env{Config: cfg, Client: c, env: env}, nil
}

// Stop stops the API server.
func (e *Env) Stop() error { return e.env.Stop() }

// Run is a TestMain body: it starts an API server, sets *into, starts each
// of the extra components (e.g. a manager; each returns its stop function),
// runs the tests, then stops everything in reverse order.
func Run(m *testing.M, into **Env, extra ...func() (func(), error)) int {
	return run(m, into, nil, extra)
}

// RunWithout is Run with an API server started by StartWithout(crds...).
func RunWithout(m *testing.M, into **Env, crds []string, extra ...func() (func(), error)) int {
	return run(m, into, crds, extra)
}

func run(m *testing.M, into **Env, without []string, extra []func() (func(), error)) int {
	env, err := StartWithout(without...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	*into = env
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testenv: stopping:", err)
		}
	}()
	for _, start := range extra {
		stop, err := start()
		if err != nil {
			fmt.Fprintln(os.Stderr, "testenv: starting:", err)
			return 1
		}
		defer stop()
	}
	return m.Run()
}

// RunManager starts a controller-runtime manager until the test ends, and
// fails the test if it stops with an error.
func RunManager(t testing.TB, mgr manager.Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}
