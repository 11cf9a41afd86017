package agente2e

import (
	"maps"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/testenv"
)

// statusServer is the server Gatewall's configurations have for the
// metrics (config.Main.StubStatus).
const statusServer = `    server {
        listen ` + config.StatusSocket + `;
        access_log off;
        location = ` + config.StatusPath + ` { stub_status; }
    }
`

// TestDataPlaneMetrics: with metrics on, the real agent finds NGINX's
// status server in the configuration Gatewall pushes and serves NGINX's
// counts in Prometheus format, labelled with the Gateway; the requests
// NGINX served show in them at the agent's next collection (once a minute).
func TestDataPlaneMetrics(t *testing.T) {
	t.Parallel()
	cp := startControlPlane(t, controlPlaneOptions{})
	key := agent.Key{Namespace: "team-m", Name: "gw"}
	pod := types.NamespacedName{Namespace: "team-m", Name: "gw-nginx-0"}
	dp := newDataPlane(t, cp, dataPlaneOptions{pod: pod, gateway: key, logLevel: "info", metrics: true})
	port := freePort(t, dp.ip)
	dp.start()
	cp.srv.SetConfig(key, mainConf(site(dp.ip, port, "counted")+statusServer))
	cp.waitPod(key, pod, agent.Applied, applyTimeout)
	waitBody(t, nil, url(dp.ip, port, "http"), "counted", 5*time.Second)

	addr := net.JoinHostPort(dp.ip, strconv.Itoa(dp.metricsPort))
	labels := map[string]string{agent.MetricLabelGatewayNamespace: key.Namespace, agent.MetricLabelGatewayName: key.Name}
	var families map[string]*dto.MetricFamily
	requests := func() (float64, bool) {
		var err error
		if families, err = testenv.DataPlaneMetrics(addr); err != nil {
			return 0, false
		}
		return testenv.Series(families, "nginx_http_requests_total", labels)
	}
	var before float64
	waitFor(t, 90*time.Second, "the first collection of NGINX's metrics", func() (bool, string) {
		v, ok := requests()
		before = v
		return ok, "no nginx_http_requests_total with the Gateway's labels"
	})
	for name, typ := range metrics.DataPlaneFamilies {
		f := families[name]
		if f == nil || f.GetType() != typ {
			t.Errorf("family %s: %v, want type %s; the families are %v", name, f, typ, slices.Sorted(maps.Keys(families)))
			continue
		}
		if _, ok := testenv.Series(families, name, labels); !ok {
			t.Errorf("family %s has no series labelled %v: %v", name, labels, f)
		}
	}

	const sent = 25
	for range sent {
		if _, err := get(nil, url(dp.ip, port, "http")); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 90*time.Second, "the requests to show in the metrics", func() (bool, string) {
		v, _ := requests()
		return v >= before+sent, strconv.FormatFloat(v, 'f', 0, 64) + " requests counted, " + strconv.FormatFloat(before, 'f', 0, 64) + " before"
	})
}
