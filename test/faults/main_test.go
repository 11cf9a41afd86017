// Package faults breaks the connection between the data plane's agent and
// the control plane on the local runtime, under a steady load, and checks
// that NGINX keeps serving its last good configuration, never loads a partial
// one, and converges once the connection is back (issue 12, item 6; the
// "edge cases" of the agent design):
//
//   - the connection drops while the agent downloads a configuration;
//   - a data-plane pod starts while the control plane cannot be reached;
//   - the control plane restarts while a push is in flight.
//
// Faults are made inside the pods' network namespaces (iptables, tc tbf), so
// nothing outside the runtime's namespaces is touched.
package faults

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/gatewall/gatewall/test/testenv"
)

var rt *testenv.Local

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	for _, tool := range []string{"nsenter", "iptables", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "faults: %s not found (%v): the fault tests need nsenter (util-linux), iptables and tc (iproute2)\n", tool, err)
			return 1
		}
	}
	return testenv.LocalRuntime{
		Name: "faults", Prefix: "gwlf", CIDR: "10.251.0.0/16", LoadBalancerCIDR: "127.0.7.0/24",
	}.Run(m, &rt)
}
