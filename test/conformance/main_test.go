// Package conformance runs the unmodified Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance) against Gatewall on the local
// runtime: a single-node cluster of real Kubernetes parts (kubelet and
// containerd running the suite's own manifests from images built here), with
// Gatewall deployed as `make deploy` deploys it: its manager a pod, its data
// planes real NGINX configured by real nginx-agents.
//
// By default only the core tests of GATEWAY-HTTP, GATEWAY-GRPC and GATEWAY-TLS
// run (CI).
// With -extended, every test of the features the GatewayClass claims runs,
// and -report-output writes the ConformanceReport (make conformance).
package conformance

import (
	"context"
	"flag"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/test/testenv"
)

var rt *testenv.Local

// channel is the Gateway API release channel whose CRDs the cluster
// installs: standard, as most clusters (and `make deploy` users) do, or
// experimental. The GatewayClass claims only the features the installed
// CRDs can carry (HTTPRoute's retry is experimental in v1.6).
var channel = flag.String("channel", "standard", "The Gateway API channel whose CRDs the local cluster installs: standard or experimental.")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	var err error
	if *channel != "standard" && *channel != "experimental" {
		fmt.Fprintf(os.Stderr, "conformance: -channel %q: want standard or experimental\n", *channel)
		return 2
	}
	rt, err = testenv.LocalRuntime{
		Name: "conformance", Prefix: "gwlc", CIDR: "10.247.0.0/16", LoadBalancerCIDR: "127.0.3.0/24",
		// The suite refuses a mix of channels.
		ExperimentalChannel: *channel == "experimental",
	}.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := rt.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			code = 1
		}
	}()
	// UDPRouteWeightedRouting sends 500 datagrams, each from a new socket,
	// within about a second, and tries again when the shares are off: a
	// UDP session each, while the default l4.maxConnections keeps 64 per
	// listener (docs/tcp-udp.md). The class gives its listeners room for
	// such bursts, and the workers the connections for it (four TCP or
	// UDP listeners of 1,024 sessions, two connections each, the most a
	// suite Gateway has), within the open files the data plane's
	// containers may have: they inherit this process's hard limit (the
	// local node raises none), and NGINX refuses a worker_rlimit_nofile
	// above it.
	workers, err := workerConnections()
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	np := &v1alpha2.NginxProxy{
		ObjectMeta: metav1.ObjectMeta{Namespace: manager.DefaultNamespace, Name: "conformance"},
		Spec: v1alpha2.NginxProxySpec{WorkerConnections: ptr.To(workers), L4: &v1alpha2.L4Listeners{
			MaxConnections: ptr.To[int32](1024), UDPSessionTimeout: ptr.To(gatewayv1.Duration("2s"))}},
	}
	if err := rt.Client.Create(context.Background(), np); err != nil {
		fmt.Fprintln(os.Stderr, "conformance: creating the GatewayClass's NginxProxy:", err)
		return 1
	}
	class := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: manager.DefaultGatewayClassName},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: manager.DefaultControllerName, ParametersRef: &gatewayv1.ParametersReference{
			Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: np.Name, Namespace: ptr.To(gatewayv1.Namespace(np.Namespace))}},
	}
	if err := rt.Client.Create(context.Background(), class); err != nil {
		fmt.Fprintln(os.Stderr, "conformance: creating the GatewayClass:", err)
		return 1
	}
	// The suite reads the class's supportedFeatures once, at its start.
	if err := classAccepted(class.Name, time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	return m.Run()
}

// classAccepted waits until Gatewall accepted the GatewayClass and listed
// its supported features.
func classAccepted(name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c := &gatewayv1.GatewayClass{}
		err := rt.Client.Get(context.Background(), client.ObjectKey{Name: name}, c)
		if err == nil && meta.IsStatusConditionTrue(c.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted)) &&
			len(c.Status.SupportedFeatures) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("GatewayClass %s not accepted with supported features after %s (last error: %v)", name, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// workerConnections are 16,384, or fewer when this process's hard limit of
// open files (which the local node's containers inherit) cannot hold what
// a worker needs for them (nginx/config's Main.RlimitNofile: two files per
// connection and 64), refusing a limit too low for the suite's four
// listeners of 1,024 UDP sessions.
func workerConnections() (int32, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	const least = 4*1024*2 + 512
	if lim.Max < 2*least+64 {
		return 0, fmt.Errorf("the hard limit of open files is %d; the suite's data planes need %d (raise it with ulimit -Hn as root)", lim.Max, 2*least+64)
	}
	return int32(min(16384, (lim.Max-64)/2)), nil
}
