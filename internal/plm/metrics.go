package plm

import (
	"errors"
	"os"
	"time"

	"github.com/gatewall/gatewall/internal/metrics"
)

// countFetch records one fetch attempt: its result, its time and, when it
// succeeded, the bytes of the verified bundle at path.
func countFetch(path string, err error, took time.Duration) {
	metrics.BundleFetchSeconds.Observe(took.Seconds())
	var integrity *IntegrityError
	switch {
	case err == nil:
		metrics.BundleFetches.WithLabelValues(metrics.FetchFetched).Inc()
		if fi, statErr := os.Stat(path); statErr == nil {
			metrics.BundleFetchBytes.Add(float64(fi.Size()))
		}
	case errors.As(err, &integrity):
		metrics.BundleFetches.WithLabelValues(metrics.FetchIntegrityError).Inc()
	default:
		metrics.BundleFetches.WithLabelValues(metrics.FetchError).Inc()
	}
}
