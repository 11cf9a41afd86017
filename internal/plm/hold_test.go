package plm

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHoldDelaysFetchesUntilRelease: while held, nothing is fetched and a
// Pending bundle says why; a cached bundle is served all the same; Release
// starts the fetch at once, and a later Hold changes nothing.
func TestHoldDelaysFetchesUntilRelease(t *testing.T) {
	dir := t.TempDir()
	cachedData := bundle("cached")
	if err := os.WriteFile(filepath.Join(dir, shaOf(cachedData)), cachedData, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) { o.CacheDir = dir })
	data := bundle("new")
	sha := shaOf(data)
	loc := "s3://bundles/new.tgz"
	h.src.put(loc, data)
	h.f.Hold("waiting for the PLM storage Secret gatewall-system/creds")
	h.run()
	h.waitRunning() // so that Want dispatches at once, were it not held
	h.f.Want([]BundleRef{{Location: loc, Sha256: sha}, {Location: "s3://bundles/cached.tgz", Sha256: shaOf(cachedData)}})

	if r := h.f.Result(shaOf(cachedData)); r.State != Fetched {
		t.Errorf("cached bundle while held: %+v; want Fetched from the cache", r)
	}
	r := h.f.Result(sha)
	if r.State != Pending || r.Message != "waiting for the PLM storage Secret gatewall-system/creds" {
		t.Errorf("while held: %+v; want Pending saying why", r)
	}
	h.f.SetCredentials("admin", "secret") // retries failures; must not start a held fetch
	if s := h.f.Stats(); s.Fetches != 0 {
		t.Fatalf("while held: %+v; want no fetch", s)
	}

	h.f.Release()
	r = h.waitState(sha, Fetched)
	if r.Attempts != 1 {
		t.Errorf("after Release: %+v; want Fetched on the first attempt", r)
	}
	h.f.Hold("again")
	other := bundle("other")
	h.src.put("s3://bundles/other.tgz", other)
	h.f.Want([]BundleRef{{Location: "s3://bundles/other.tgz", Sha256: shaOf(other)}})
	h.waitState(shaOf(other), Fetched)
}
