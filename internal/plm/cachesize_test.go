package plm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiplm "github.com/gatewall/gatewall/api/plm"
)

// TestCacheSizeLimit: the cache never holds more than MaxCacheSize bytes. A
// fetch that does not fit evicts cached bundles nobody wants, the oldest
// first; when the wanted bundles leave no room, it fails with a FetchError
// saying so, evicting nothing, and is retried once room is made.
func TestCacheSizeLimit(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MaxCacheSize = 100 })
	blob := func(name string, n int) []byte { return []byte(name + strings.Repeat(".", n-len(name))) }
	a, b, c, d := blob("a", 30), blob("b", 30), blob("c", 60), blob("d", 50)
	for loc, data := range map[string][]byte{"s3://bundles/a": a, "s3://bundles/b": b, "s3://bundles/c": c, "s3://bundles/d": d} {
		h.src.put(loc, data)
	}
	ref := func(loc string, data []byte) BundleRef { return BundleRef{Location: loc, Sha256: shaOf(data)} }
	cached := func(data []byte) bool {
		_, err := os.Stat(filepath.Join(h.dir, shaOf(data)))
		return err == nil
	}
	h.run()

	h.f.Want([]BundleRef{ref("s3://bundles/a", a)})
	h.waitState(shaOf(a), Fetched)
	h.clock.Step(1)
	h.f.Want([]BundleRef{ref("s3://bundles/b", b)}) // a no longer wanted, still cached
	h.waitState(shaOf(b), Fetched)
	if !cached(a) || !cached(b) {
		t.Fatalf("60 of 100 bytes: both bundles should stay cached")
	}

	// c (60) and b (30) fit only without a: a is evicted, b (wanted) stays.
	h.f.Want([]BundleRef{ref("s3://bundles/b", b), ref("s3://bundles/c", c)})
	h.waitState(shaOf(c), Fetched)
	if cached(a) || !cached(b) || !cached(c) {
		t.Fatalf("after c: a cached %v, b %v, c %v; want only the wanted b and c", cached(a), cached(b), cached(c))
	}

	// d (50) does not fit beside the wanted b and c (90): it fails, and
	// nothing wanted is evicted.
	h.f.Want([]BundleRef{ref("s3://bundles/b", b), ref("s3://bundles/c", c), ref("s3://bundles/d", d)})
	r := h.waitState(shaOf(d), Failed)
	if r.Reason != ReasonFetchError || !strings.Contains(r.Message, "the WAF bundle cache is full") || !strings.Contains(r.Message, "--plm-cache-max-size") {
		t.Errorf("d: %+v; want a FetchError saying the cache is full", r)
	}
	if !cached(b) || !cached(c) || cached(d) {
		t.Errorf("after d failed: b cached %v, c %v, d %v; want b and c only", cached(b), cached(c), cached(d))
	}

	// c is no longer wanted: d's retry evicts it and succeeds.
	h.f.Want([]BundleRef{ref("s3://bundles/b", b), ref("s3://bundles/d", d)})
	h.clock.Step(r.RetryAt.Sub(h.clock.Now()))
	h.waitState(shaOf(d), Fetched)
	if cached(c) || !cached(b) || !cached(d) {
		t.Errorf("after d's retry: c cached %v, b %v, d %v; want b and d", cached(c), cached(b), cached(d))
	}
}

// TestCacheSizeCountsLoadedBundles: the bundles found in the cache at start
// count against the limit.
func TestCacheSizeCountsLoadedBundles(t *testing.T) {
	dir := t.TempDir()
	old := []byte(strings.Repeat("o", 80))
	if err := os.WriteFile(filepath.Join(dir, shaOf(old)), old, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) { o.MaxCacheSize = 100; o.CacheDir = dir })
	h.dir = dir
	wanted := []byte(strings.Repeat("w", 50))
	h.src.put("s3://bundles/w", wanted)
	h.run()
	h.f.Want([]BundleRef{{Location: "s3://bundles/old", Sha256: shaOf(old)}, {Location: "s3://bundles/w", Sha256: shaOf(wanted)}})
	if r := h.waitState(shaOf(wanted), Failed); !strings.Contains(r.Message, "cache is full") {
		t.Errorf("%+v; want the cache full: the loaded 80 bytes are wanted", r)
	}
}

// TestScopeRefusesOtherLocations: the fetcher itself never opens a location
// outside its scope, whatever it is asked for.
func TestScopeRefusesOtherLocations(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Scope = apiplm.Scope{Bucket: "plm", Prefix: "bundles"} })
	secret := []byte("an object PLM never wrote")
	h.src.put("s3://backups/db-dump.tgz", secret)
	h.run()
	h.f.Want([]BundleRef{{Location: "s3://backups/db-dump.tgz", Sha256: shaOf(secret)}})
	r := h.f.Result(shaOf(secret))
	if r.State != Failed || r.Reason != ReasonInvalidReference || !strings.Contains(r.Message, "outside the PLM storage") {
		t.Errorf("%+v; want an InvalidReference outside the storage scope", r)
	}
	h.src.mu.Lock()
	defer h.src.mu.Unlock()
	if n := h.src.opened["backups/db-dump.tgz"]; n != 0 {
		t.Errorf("the location outside the scope was opened %d times", n)
	}
}
