// Package local tests the local runtime the way a user meets it: a
// single-node cluster of real Kubernetes parts (the kubelet, containerd and
// kube-proxy of package kubenode, on the control plane of package cluster)
// with Gatewall deployed from config/default and its images, the sample
// applied, and kubectl working against it; and that a runtime leaves
// nothing behind when it stops or when the process that ran it dies. The
// tests need root and `make images`.
package local

import (
	"fmt"
	"os"
	"testing"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/test/testenv"
)

// rt is the runtime the tests share; like `make run-local`, its data planes
// run the data-plane image itself, not the test image.
var rt *testenv.Local

var shared = testenv.LocalRuntime{
	Name: "local", Prefix: "gwlt", CIDR: "10.245.0.0/16", LoadBalancerCIDR: "127.0.5.0/24",
	ManagerArgs: []string{"--nginx-image=" + images.DataPlane},
}

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		crashChild()
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	var err error
	if rt, err = shared.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := rt.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}()
	return m.Run()
}
