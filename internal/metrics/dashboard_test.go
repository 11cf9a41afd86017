package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/gatewall/gatewall/internal/metrics"
)

// TestDashboardUsesRegisteredMetrics: every gatewall_ metric the Grafana
// dashboard queries is one Gatewall registers (a histogram's _bucket series
// included), and every registered gatewall_ family is charted but those
// left out on purpose.
func TestDashboardUsesRegisteredMetrics(t *testing.T) {
	data, err := os.ReadFile("../../config/grafana/gatewall-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	// Give every family a series, so that the registry gathers it.
	gw := metrics.Gateway(types.NamespacedName{Namespace: "ns", Name: "gw"})
	metrics.TranslationSeconds.With(gw).Observe(1)
	metrics.ConfigurationBytes.With(gw).Set(1)
	metrics.ConfigurationFiles.With(gw).Set(1)
	metrics.Pushes.With(gw).Inc()
	metrics.Applies.WithLabelValues("ns", "gw", metrics.ApplyApplied).Inc()
	metrics.ApplySeconds.With(gw).Observe(1)
	metrics.Resyncs.With(gw).Inc()
	metrics.AgentRefusals.WithLabelValues("pod").Inc()
	metrics.StatusWrites.WithLabelValues("Gateway", metrics.WriteWritten).Inc()
	metrics.BundleFetches.WithLabelValues(metrics.FetchFetched).Inc()
	metrics.Refused.WithLabelValues("ns", "gw", "HTTPRoute", "NoMatchingParent").Set(1)
	metrics.SetAgentsSource(func() map[types.NamespacedName]int {
		return map[types.NamespacedName]int{{Namespace: "ns", Name: "gw"}: 1}
	})
	metrics.SetBundlesSource(func() metrics.BundleCounts { return metrics.BundleCounts{Cached: 1} })
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, f := range families {
		registered[f.GetName()] = true
	}
	name := regexp.MustCompile(`gatewall_[a-z_]+`)
	nginx := regexp.MustCompile(`nginx_[a-z_]+`)
	charted := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, m := range nginx.FindAllString(q.Expr, -1) {
				if _, ok := metrics.DataPlaneFamilies[m]; !ok && m != "nginx_connections_outcome" {
					t.Errorf("panel %q queries %s, which the data plane does not serve", p.Title, m)
				}
				charted[m] = true
			}
			for _, m := range name.FindAllString(q.Expr, -1) {
				base := regexp.MustCompile(`_(bucket|sum|count)$`).ReplaceAllString(m, "")
				if !registered[m] && !registered[base] {
					t.Errorf("panel %q queries %s, which Gatewall does not register", p.Title, m)
				}
				charted[base] = true
			}
		}
	}
	// Families the dashboard leaves out on purpose: a file count, pushes
	// (applies by result say more), and a fetch's time and bytes.
	uncharted := map[string]bool{"gatewall_configuration_files": true, "gatewall_pushes_total": true,
		"gatewall_bundle_fetch_duration_seconds": true, "gatewall_bundle_fetch_bytes_total": true}
	var missing []string
	for n := range registered {
		if regexp.MustCompile(`^gatewall_`).MatchString(n) && !charted[n] && !uncharted[n] {
			missing = append(missing, n)
		}
	}
	if !charted["nginx_http_requests_total"] {
		missing = append(missing, "nginx_http_requests_total")
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("families not charted: %v", missing)
	}
}
