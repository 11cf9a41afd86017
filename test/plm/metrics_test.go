package plm_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/test/s3test"
)

// TestFetchMetrics: against a real S3 server, a fetched bundle, a bundle
// whose sha256 does not match and an unreachable object move their
// gatewall_bundle_fetches_total results; the bytes fetched grow by the
// bundle's size; every attempt is timed; the fetcher's counts say what is
// cached and wanted.
func TestFetchMetrics(t *testing.T) {
	srv := s3test.Start(t, "admin", adminSecret, nil)
	good, goodSha := randomBundle(t, 16<<10)
	tampered, _ := randomBundle(t, 1<<10)
	_, compiledSha := randomBundle(t, 1<<10)
	_, missingSha := randomBundle(t, 1<<10)
	srv.Put(nil, bucket, "good.tgz", good)
	srv.Put(nil, bucket, "tampered.tgz", tampered)

	result := func(r string) float64 { return testutil.ToFloat64(metrics.BundleFetches.WithLabelValues(r)) }
	before := map[string]float64{}
	for _, r := range []string{metrics.FetchFetched, metrics.FetchIntegrityError, metrics.FetchError} {
		before[r] = result(r)
	}
	bytesBefore := testutil.ToFloat64(metrics.BundleFetchBytes)

	f := newFetcher(t, srv.URL(), t.TempDir(), nil)
	setCredentials(t, f, adminSecret)
	f.run()
	f.Want([]plm.BundleRef{ref("good.tgz", goodSha), ref("tampered.tgz", compiledSha), ref("missing.tgz", missingSha)})
	f.waitState(goodSha, plm.Fetched)
	f.waitState(compiledSha, plm.Failed)
	f.waitState(missingSha, plm.Failed)

	for r, want := range map[string]float64{metrics.FetchFetched: 1, metrics.FetchIntegrityError: 1, metrics.FetchError: 1} {
		if got := result(r) - before[r]; got < want {
			t.Errorf("gatewall_bundle_fetches_total{result=%q} grew by %v, want at least %v", r, got, want)
		}
	}
	if got := testutil.ToFloat64(metrics.BundleFetchBytes) - bytesBefore; got != float64(len(good)) {
		t.Errorf("gatewall_bundle_fetch_bytes_total grew by %v, want the bundle's %d bytes", got, len(good))
	}
	if n := testutil.CollectAndCount(metrics.BundleFetchSeconds); n != 1 {
		t.Errorf("gatewall_bundle_fetch_duration_seconds has %d series, want 1", n)
	}
	c := f.Counts()
	if c.Cached != 1 || c.Wanted["Fetched"] != 1 || c.Wanted["Failed"] != 2 {
		t.Errorf("counts %+v, want 1 cached, 1 wanted Fetched, 2 Failed", c)
	}
}
