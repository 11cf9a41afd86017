package local

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/kubernetes"

	"github.com/gatewall/gatewall/internal/local/cluster"
	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/local/node"
	"github.com/gatewall/gatewall/internal/local/podnet"
)

// env is the cluster and node every test shares (like test/envtest's).
var env *localEnv

type localEnv struct {
	cluster *cluster.Cluster
	node    *node.Node
	client  kubernetes.Interface
	binDir  string
	workDir string
	started time.Time
}

// Names that keep the tests apart from a running `make run-local`.
const (
	testPrefix      = "gwlt"
	testCIDR        = "10.245.0.0/16"
	hostForwardPort = 18443
	missingImage    = "example.com/missing-tool"
	// mountRoot holds the tests' volume mount paths: the node creates mount
	// points missing on the host, and these are removed when the tests end.
	mountRoot = "/var/lib/gatewall-local-test"
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	e, err := startEnv(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "local runtime:", err)
		return 1
	}
	env = e
	code := m.Run()
	if err := e.node.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping node:", err)
		code = 1
	}
	if err := e.cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping cluster:", err)
		code = 1
	}
	// Mount points the tests' pods needed on the host (see mountRoot).
	_ = os.RemoveAll(mountRoot)
	if left := leftovers(testPrefix, testCIDR); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "left behind after Stop:", left)
		code = 1
	}
	return code
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func startEnv(ctx context.Context) (*localEnv, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("the local runtime tests need root (network, mount and PID namespaces)")
	}
	bin := filepath.Join(repoRoot(), "bin")
	if _, err := os.Stat(filepath.Join(bin, "echo-basic")); err != nil {
		return nil, fmt.Errorf("bin/echo-basic not found: run hack/echo-basic.sh to build it")
	}
	// A fixed work dir lets a run clean up what a crashed run left.
	work := filepath.Join(os.TempDir(), "gatewall-local-test")
	start := time.Now()
	gwCRDs, err := gatewayAPICRDs()
	if err != nil {
		return nil, err
	}
	c, err := cluster.Start(ctx, cluster.Options{
		BinDir: bin, WorkDir: filepath.Join(work, "cluster"),
		KubeconfigPath: filepath.Join(work, "kubeconfig"),
		CRDDirs:        []string{gwCRDs},
	})
	if err != nil {
		return nil, err
	}
	hostService, err := serveOnLoopback("host-service")
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	n, err := node.Start(ctx, c.Config(), node.Options{
		Name:         "local-test-node",
		StateDir:     filepath.Join(work, "node"),
		Images:       testImages(bin),
		KubeletCA:    c.KubeletCA(),
		Network:      podnet.Options{Prefix: testPrefix, CIDR: testCIDR},
		LoadBalancer: loadbalancer.Options{CIDR: "127.0.1.0/24"},
		HostForwards: []node.HostForward{{Port: hostForwardPort, Target: hostService}},
		NodeAliases:  []string{"control-plane.local"},
		Log:          fileLogger(filepath.Join(work, "node.log")),
	})
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		return nil, err
	}
	return &localEnv{cluster: c, node: n, client: client, binDir: bin, workDir: work, started: start}, nil
}

// testImages is the default image table plus an image whose program is
// missing.
func testImages(bin string) node.Images {
	im := node.DefaultImages(bin)
	im[missingImage] = node.Runner{Command: []string{"/nonexistent/tool"}, Hint: "run hack/tool.sh to build it"}
	return im
}

// gatewayAPICRDs is the Gateway API module's standard CRD directory.
func gatewayAPICRDs() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return "", fmt.Errorf("locating sigs.k8s.io/gateway-api: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard"), nil
}

// serveOnLoopback runs an HTTP server on 127.0.0.1 answering body, standing
// in for a service on the host that pods reach through a HostForward.
func serveOnLoopback(body string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, body)
		}))
	}()
	return ln.Addr().String(), nil
}

// fileLogger writes the node's log to path, so that a failing test can be
// diagnosed without flooding the test output.
func fileLogger(path string) logr.Logger {
	f, err := os.Create(path)
	if err != nil {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) {
		fmt.Fprintf(f, "%s %s %s\n", time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{})
}

// logHint points a failure at the logs.
func logHint() string {
	return fmt.Sprintf("(node log %s, control-plane logs in %s)",
		filepath.Join(env.workDir, "node.log"), env.cluster.LogDir())
}
