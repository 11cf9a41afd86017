package plm

import (
	"errors"
	"time"

	"github.com/gatewall/gatewall/internal/metrics"
)

// countFetch records one fetch attempt: its result, its time and, when it
// succeeded, the size of the verified bundle.
func countFetch(size int64, err error, took time.Duration) {
	metrics.BundleFetchSeconds.Observe(took.Seconds())
	var integrity *IntegrityError
	switch {
	case err == nil:
		metrics.BundleFetches.WithLabelValues(metrics.FetchFetched).Inc()
		metrics.BundleFetchBytes.Add(float64(size))
	case errors.As(err, &integrity):
		metrics.BundleFetches.WithLabelValues(metrics.FetchIntegrityError).Inc()
	default:
		metrics.BundleFetches.WithLabelValues(metrics.FetchError).Inc()
	}
}
