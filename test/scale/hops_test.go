package scale

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/gatewall/gatewall/test/testenv"
)

// The manager's share of endpoint propagation, hop by hop, from its own
// histograms read before and after the pod churn: how long Gateways waited
// in the Gateway controller's queue, how long their reconciles took, and
// how long from the endpoint feed taking a change to a data-plane pod's
// acknowledgement; and the whole translations among the reconciles (the
// others are refreshes of endpoints alone, counted by wakes). What the
// harness measures beyond them is the API server's announcement reaching
// the manager's informer.
var hops = []struct {
	title, metric string
	labels        map[string]string
}{
	{"queue wait", "workqueue_queue_duration_seconds", map[string]string{"name": "gateway"}},
	{"reconcile", "controller_runtime_reconcile_time_seconds", map[string]string{"controller": "gateway"}},
	{"feed to the pod's acknowledgement", "gatewall_endpoint_propagation_seconds", nil},
	{"whole translations", "gatewall_translation_duration_seconds", nil},
}

// wakesMetric counts the reconciles that refreshed endpoints alone.
const wakesMetric = "gatewall_endpoint_wakes_total"

// hopReading is one reading of the hops' histograms, of the wakes, and of
// the manager's garbage collections and heap (what slows reconciles on a
// busy node besides their own work).
type hopReading struct {
	hists []buckets
	wakes float64
	gcs   uint64
	heap  float64
}

// buckets are a histogram's cumulative counts by upper bound, summed over
// the series whose labels include labels.
type buckets struct {
	bounds []float64
	counts []uint64
}

// hopBuckets reads the hops' histograms and the wakes from the leading
// manager.
func hopBuckets(t *testing.T, pod corev1.Pod) hopReading {
	t.Helper()
	token := rt.MetricsToken(t, fmt.Sprintf("scale-hops-%d", time.Now().UnixNano()), true)
	families := testenv.ManagerMetrics(t, pod, token)
	var reading hopReading
	for _, m := range families[wakesMetric].GetMetric() {
		reading.wakes += m.GetCounter().GetValue()
	}
	for _, m := range families["go_gc_duration_seconds"].GetMetric() {
		reading.gcs += m.GetSummary().GetSampleCount()
	}
	for _, m := range families["go_memstats_heap_inuse_bytes"].GetMetric() {
		reading.heap += m.GetGauge().GetValue()
	}
	out := make([]buckets, len(hops))
	for i, h := range hops {
		f := families[h.metric]
		if f == nil {
			t.Fatalf("the manager's metrics have no %s", h.metric)
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, h.labels) {
				continue
			}
			for j, b := range m.GetHistogram().GetBucket() {
				if len(out[i].bounds) <= j {
					out[i].bounds = append(out[i].bounds, b.GetUpperBound())
					out[i].counts = append(out[i].counts, 0)
				}
				out[i].counts[j] += b.GetCumulativeCount()
			}
		}
	}
	reading.hists = out
	return reading
}

// hasLabels says whether a series has every label of labels.
func hasLabels(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}

// quantileBound is the upper bound of the bucket that holds quantile q of
// what was observed between two readings, and how many were.
func quantileBound(before, after buckets, q float64) (float64, uint64) {
	if len(after.counts) == 0 {
		return math.NaN(), 0
	}
	n := after.counts[len(after.counts)-1]
	if len(before.counts) == len(after.counts) {
		n -= before.counts[len(before.counts)-1]
	}
	want := uint64(math.Ceil(q * float64(n)))
	for j, c := range after.counts {
		if len(before.counts) == len(after.counts) {
			c -= before.counts[j]
		}
		if n > 0 && c >= want {
			return after.bounds[j], n
		}
	}
	return math.Inf(1), n
}

// hopReport says, for each hop, the buckets of its p50 and p99 between
// two readings.
func hopReport(before, after hopReading) string {
	var parts []string
	for i, h := range hops {
		p50, n := quantileBound(before.hists[i], after.hists[i], .5)
		p99, _ := quantileBound(before.hists[i], after.hists[i], .99)
		parts = append(parts, fmt.Sprintf("%s ≤ %s / ≤ %s (%d)", h.title, seconds(p50), seconds(p99), n))
	}
	parts = append(parts, fmt.Sprintf("endpoint refreshes without a snapshot: %.0f; garbage collections: %d (heap in use %.0f MiB after)",
		after.wakes-before.wakes, after.gcs-before.gcs, after.heap/(1<<20)))
	return strings.Join(parts, "; ")
}

func seconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "none"
	case math.IsInf(s, 1):
		return "more"
	case s < 1:
		return fmt.Sprintf("%.3g ms", s*1000)
	}
	return fmt.Sprintf("%.3g s", s)
}

// The hop report's quantiles come from the observations between two
// readings, not from everything the histogram ever saw.
func TestQuantileBound(t *testing.T) {
	bounds := []float64{0.001, 0.002, 0.004, 0.008}
	before := buckets{bounds: bounds, counts: []uint64{100, 100, 100, 100}}
	after := buckets{bounds: bounds, counts: []uint64{100, 150, 197, 200}}
	for _, c := range []struct {
		q    float64
		want float64
	}{{.5, 0.002}, {.95, 0.004}, {.99, 0.008}} {
		if got, n := quantileBound(before, after, c.q); got != c.want || n != 100 {
			t.Errorf("quantile %g: %g of %d observations, want %g of 100", c.q, got, n, c.want)
		}
	}
	if got, n := quantileBound(buckets{}, buckets{}, .5); !math.IsNaN(got) || n != 0 {
		t.Errorf("without observations: %g of %d", got, n)
	}
	if got := seconds(0.0001); got != "0.1 ms" {
		t.Errorf("0.1 ms reads %q", got)
	}
}
