// Package e2e runs Gatewall end to end on the local runtime: a real API
// server, kube-controller-manager and kube-scheduler, a played node running
// pods as host processes (the data plane as the real NGINX and nginx-agent),
// and Gatewall's manager. Traffic goes from the test through the Gateway's
// load-balancer address to NGINX to echo backends.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/gatewall/gatewall/internal/localrun"
	"github.com/gatewall/gatewall/test/testenv"
)

var rt *localrun.Runtime

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var stop func()
	var err error
	rt, stop, err = testenv.LocalRuntime{
		Name: "e2e", Prefix: "gwle", CIDR: "10.246.0.0/16", LoadBalancerCIDR: "127.0.2.0/24",
	}.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	return m.Run()
}
