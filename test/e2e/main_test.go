// Package e2e runs Gatewall end to end on the local runtime: a single-node
// cluster of real Kubernetes parts (API server, controller-manager,
// scheduler, kubelet, containerd, kube-proxy) with Gatewall deployed as
// `make deploy` deploys it, its manager a pod from its image, and data planes
// from the data-plane image (real NGINX and nginx-agent). Traffic goes from
// the test through the Gateway's load-balancer address to NGINX to echo
// backends running from their images.
package e2e

import (
	"os"
	"testing"

	"github.com/gatewall/gatewall/test/testenv"
)

var rt *testenv.Local

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	return testenv.LocalRuntime{
		Name: "e2e", Prefix: "gwle", CIDR: "10.246.0.0/16", LoadBalancerCIDR: "127.0.2.0/24",
		// HTTPRoute's retry is in the experimental channel (v1.6): TestRetry.
		ExperimentalHTTPRoute: true,
		// SnippetsFilter and SnippetsPolicy are used only with --snippets
		// (TestNGFScenarios/snippets); no other test here names one, so the
		// flag changes nothing for them and saves an installation of its own.
		ManagerArgs: []string{"--snippets"},
	}.Run(m, &rt)
}
