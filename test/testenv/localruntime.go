package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/localrun"
)

// LocalRuntime says where a test package's local runtime lives. Packages
// whose runtimes may run at the same time (go test runs packages in
// parallel) need distinct names, prefixes and networks. In use (kubenode
// refuses a network another running node routes):
//
//	test/local        gwlt 10.245.0.0/16  127.0.1.0/24   (its second runtime: gwls 10.248.0.0/23 127.0.4.0/24)
//	test/e2e          gwle 10.246.0.0/16  127.0.2.0/24
//	test/conformance  gwlc 10.247.0.0/16  127.0.3.0/24
//	test/faults       gwlf 10.251.0.0/16  127.0.7.0/24
//	make run-local    gwl  10.244.0.0/16  127.0.1.0/24
type LocalRuntime struct {
	// Name names the state directory under the temp dir, and the node.
	Name string
	// Prefix names the node's host link; CIDR is its network;
	// LoadBalancerCIDR gives LoadBalancer Services their addresses.
	Prefix, CIDR, LoadBalancerCIDR string
	// ManagerArgs are added to the manager's arguments (after TestArgs).
	ManagerArgs []string
	// ExperimentalHTTPRoute installs the experimental channel's HTTPRoute
	// CRD (localrun.Options).
	ExperimentalHTTPRoute bool
	// ExperimentalChannel installs the Gateway API's experimental channel.
	ExperimentalChannel bool
}

// TestArgs are the manager's arguments in every test runtime: data planes
// from the data-plane test image (with the App Protect test double) and the
// WAF stand-in images, a short reload monitoring period, and every agent
// protocol event logged (AgentEvents reads them).
func TestArgs() []string {
	return []string{
		"--nginx-image=" + images.DataPlaneTest,
		"--waf-enforcer-image=" + images.WAFStandIn,
		"--waf-config-mgr-image=" + images.WAFStandIn,
		"--agent-reload-monitoring-period=1s",
		"--zap-log-level=2",
		"--zap-time-encoding=rfc3339nano",
	}
}

// Local is a running local runtime with Gatewall deployed.
type Local struct {
	*localrun.Runtime
	name string
	args []string

	mu        sync.Mutex
	forbidden map[string]bool // "pod: line" of refused requests
}

// Start starts the local runtime (cluster, node, load balancer, DNS) and
// deploys Gatewall with TestArgs and ManagerArgs. Logs of the runtime go to
// runtime.log in the state directory, named on stderr.
func (l LocalRuntime) Start() (*Local, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%s: the local runtime needs root (namespaces, cgroups, containerd)", l.Name)
	}
	state := filepath.Join(os.TempDir(), "gatewall-"+l.Name)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(state, "runtime.log"))
	if err != nil {
		return nil, err
	}
	log := zap.New(zap.WriteTo(logFile), zap.UseDevMode(true))
	ctrl.SetLogger(log)
	fmt.Fprintf(os.Stderr, "%s: runtime logs in %s, the node's in %s\n", l.Name, logFile.Name(), filepath.Join(state, "node", "logs"))
	ctx := context.Background()
	rt, err := localrun.Start(ctx, localrun.Options{
		Root: RepoRoot(), StateDir: state, KubeconfigPath: filepath.Join(state, "kubeconfig"),
		Prefix: l.Prefix, CIDR: l.CIDR, LoadBalancerCIDR: l.LoadBalancerCIDR, NodeName: l.Name,
		ExperimentalHTTPRoute: l.ExperimentalHTTPRoute, ExperimentalChannel: l.ExperimentalChannel, Log: log.WithName("local"),
	})
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%s: starting the local runtime: %w", l.Name, err)
	}
	local := &Local{Runtime: rt, name: l.Name, args: append(TestArgs(), l.ManagerArgs...), forbidden: map[string]bool{}}
	if err := rt.Deploy(ctx, localrun.Deployment{Args: local.args}); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: deploying Gatewall: %w", l.Name, err), local.Stop())
	}
	return local, nil
}

// Run is a TestMain body: it starts the runtime, sets *into, runs the
// tests and stops the runtime.
func (l LocalRuntime) Run(m *testing.M, into **Local) int {
	rt, err := l.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*into = rt
	code := m.Run()
	if err := rt.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

// Redeploy rolls the manager out with more arguments (after the runtime's),
// or with the runtime's own when extra is empty.
func (l *Local) Redeploy(ctx context.Context, extra ...string) error {
	l.keepForbidden(ctx)
	return l.Deploy(ctx, localrun.Deployment{Args: append(append([]string(nil), l.args...), extra...)})
}

// ScaleManager sets the manager's replicas and waits: for none, until its
// pods are gone; else until they run and one holds the leader Lease.
func (l *Local) ScaleManager(ctx context.Context, replicas int32) error {
	l.keepForbidden(ctx)
	return l.Runtime.ScaleManager(ctx, replicas)
}

// Refusals are the log lines, so far, of requests the API server refused a
// manager pod.
func (l *Local) Refusals(ctx context.Context) []string {
	l.keepForbidden(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.forbidden))
}

// Stop fails when a manager pod logged that the API server refused it
// (Gatewall's RBAC, config/rbac, misses a permission, or its admission
// policies refuse what the manager writes), then stops the runtime. The node keeps every pod's log in its state directory.
func (l *Local) Stop() error {
	forbidden := l.Refusals(context.Background())
	var errs []error
	if len(forbidden) > 0 {
		errs = append(errs, fmt.Errorf("%s: the API server refused the manager (config/rbac misses a permission or its admission policies refuse what it writes):\n%s",
			l.name, strings.Join(forbidden, "\n")))
	}
	return errors.Join(append(errs, l.Runtime.Stop())...)
}

// refused says whether a log line is of a request the API server refused
// the manager: by RBAC, or by config/rbac's admission policies (quotes in it
// may be escaped: klog and zap quote messages).
func refused(line string) bool {
	rbac := strings.Contains(line, "forbidden: User ") &&
		strings.Contains(line, "system:serviceaccount:"+localrun.ManagerNamespace+":")
	return rbac || strings.Contains(line, "ValidatingAdmissionPolicy") && strings.Contains(line, "denied request")
}

// keepForbidden records the refused requests the current manager pods logged.
func (l *Local) keepForbidden(ctx context.Context) {
	pods, err := l.ManagerPods(ctx)
	if err != nil {
		return
	}
	for _, p := range pods {
		lines, err := l.PodLog(ctx, p)
		if err != nil {
			continue
		}
		l.mu.Lock()
		for _, line := range lines {
			if refused(line) {
				l.forbidden[p.Name+": "+line] = true
			}
		}
		l.mu.Unlock()
	}
}

// PodLog reads the log of a pod's first container, the kubelet's way
// (through the API server).
func (l *Local) PodLog(ctx context.Context, p corev1.Pod) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	opts := &corev1.PodLogOptions{}
	if len(p.Spec.Containers) > 0 {
		opts.Container = p.Spec.Containers[0].Name
	}
	stream, err := l.Clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, opts).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	var lines []string
	s := bufio.NewScanner(stream)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return lines, s.Err()
}
