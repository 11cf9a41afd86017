// Package scale measures Gatewall at the sizes of the control/data-plane
// design's performance goals on the local runtime (issue 13): one Gateway
// with an HTTP listener and one HTTPS listener per certificate (the last in
// a ListenerSet: a Gateway holds at most 64 listeners), a route per
// hostname, traffic from this host, and the figures of docs/benchmarks.md.
//
// The sizes are flags. `make test` runs it small, so that it cannot rot;
// `make scale` runs the design's sizes (5,000 routes, 64 certificates, 5
// minutes of one change a second, 20 data-plane pods) and prints the
// summary table. The figures are reported, not asserted (they depend on the
// machine); what is asserted is behaviour: every route serves, every HTTPS
// listener presents its own certificate, no request to an unchanged route
// fails during churn, every change reaches its new state, every data-plane
// pod serves a change.
package scale

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/test/testenv"
)

var rt *testenv.Local

// pprofPort serves the manager's profiles inside its pod.
const pprofPort = "6060"

var (
	routesFlag    = flag.Int("scale.routes", 50, "HTTPRoutes on the big Gateway, each with its own hostname (server block)")
	certsFlag     = flag.Int("scale.certs", 4, "HTTPS listeners, each with its own certificate Secret (at least 2)")
	samplesFlag   = flag.Int("scale.samples", 5, "routes created one at a time to measure propagation")
	churnFlag     = flag.Duration("scale.churn", 30*time.Second, "how long one route changes every second (30 s is each change kind 10 times)")
	unchangedFlag = flag.Int("scale.unchanged", 20, "unchanged routes the load generator hits during churn")
	policiesFlag  = flag.Int("scale.policies", 5, "ClientSettingsPolicies present throughout: one on the big Gateway, the others on its first routes")
	fanoutFlag    = flag.Int("scale.fanout", 2, "data-plane pods of one Gateway, and Gateways, in the fan-out test")
	reportFlag    = flag.String("scale.report", "", "file to write the summary table to (Markdown)")
	profileFlag   = flag.String("scale.profile", "", "file to write the manager's CPU profile during the propagation samples to")
	churnProfile  = flag.String("scale.churn-profile", "", "file to write the manager's CPU profile during churn to")
	podProfile    = flag.String("scale.pod-churn-profile", "", "file to write the manager's CPU profile during pod churn to")
	managerFlag   = flag.String("scale.manager-args", "", "more arguments for the manager, space-separated (e.g. --agent-reload-monitoring-period=2s)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	var args []string
	if *profileFlag != "" || *churnProfile != "" || *podProfile != "" {
		args = append(args, "--pprof-bind-address=:"+pprofPort)
	}
	args = append(args, strings.Fields(*managerFlag)...)
	// Prefix and CIDRs must be the package's own: go test runs packages in
	// parallel, and test/local's second runtime uses gwls.
	os.Exit(testenv.LocalRuntime{
		Name: "scale", Prefix: "gwlk", CIDR: "10.252.0.0/16", LoadBalancerCIDR: "127.0.8.0/24",
		ManagerArgs: args,
	}.Run(m, &rt))
}
