package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// BundleCounts is what the WAF bundle fetcher holds, read at each scrape.
type BundleCounts struct {
	// Cached counts the verified bundles in the cache.
	Cached int
	// Wanted counts the bundles the WAF policies want, by state
	// (Fetched, Pending, Failed).
	Wanted map[string]int
}

// bundles reports gatewall_bundles_cached and gatewall_bundles_wanted from
// the fetcher's state at each scrape.
type bundles struct {
	cached, wanted *prometheus.Desc
	source         atomic.Pointer[func() BundleCounts]
}

var bundleStates = &bundles{
	cached: prometheus.NewDesc("gatewall_bundles_cached",
		"Verified WAF bundles in the manager's cache.", nil, nil),
	wanted: prometheus.NewDesc("gatewall_bundles_wanted",
		"WAF bundles the WAFGatewayBindingPolicies want, by state: Fetched (in force once pushed), Pending, Failed (a policy's last good bundle, if any, stays in force).", []string{"state"}, nil),
}

func init() { ctrlmetrics.Registry.MustRegister(bundleStates) }

// SetBundlesSource sets what the bundle gauges report (none without PLM
// storage). A manager started again in the same process replaces its
// predecessor's.
func SetBundlesSource(f func() BundleCounts) { bundleStates.source.Store(&f) }

func (b *bundles) Describe(ch chan<- *prometheus.Desc) { ch <- b.cached; ch <- b.wanted }

func (b *bundles) Collect(ch chan<- prometheus.Metric) {
	f := b.source.Load()
	if f == nil {
		return
	}
	c := (*f)()
	ch <- prometheus.MustNewConstMetric(b.cached, prometheus.GaugeValue, float64(c.Cached))
	for _, state := range []string{"Fetched", "Pending", "Failed"} {
		ch <- prometheus.MustNewConstMetric(b.wanted, prometheus.GaugeValue, float64(c.Wanted[state]), state)
	}
}
