package plm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func bundle(name string) []byte { return []byte("compiled bundle " + name) }

func TestDedupeBySha256(t *testing.T) {
	h := newHarness(t, nil)
	data := bundle("a")
	sha := shaOf(data)
	h.src.put("s3://bundles/a1.tgz", data)
	h.src.put("s3://bundles/a2.tgz", data)
	h.run()

	refs := []BundleRef{
		{Location: "s3://bundles/a1.tgz", Sha256: sha},
		{Location: "s3://bundles/a2.tgz", Sha256: sha},
		{Location: "s3://bundles/a1.tgz", Sha256: sha}, // another Gateway, same policy
	}
	h.f.Want(refs)
	r := h.waitState(sha, Fetched)
	h.f.Want(refs) // idempotent

	if got := h.f.Stats().Attempts[sha]; got != 1 {
		t.Errorf("fetch attempts for %s = %d; want 1", sha, got)
	}
	if r.Attempts != 1 || r.Path != filepath.Join(h.dir, sha) {
		t.Errorf("Result = %+v; want 1 attempt and the cache path", r)
	}
	if got, err := os.ReadFile(r.Path); err != nil || string(got) != string(data) {
		t.Errorf("cache file = %q, %v; want the bundle", got, err)
	}
}

func TestTwentyRefsTwoShas(t *testing.T) {
	h := newHarness(t, nil)
	var refs []BundleRef
	shas := map[string]bool{}
	for i := range 20 {
		data := bundle(fmt.Sprint(i % 2))
		loc := fmt.Sprintf("s3://bundles/gw%d/policy.tgz", i)
		h.src.put(loc, data)
		refs = append(refs, BundleRef{Location: loc, Sha256: shaOf(data)})
		shas[shaOf(data)] = true
	}
	h.f.Want(refs) // before Run: nothing starts until Run does
	if s := h.f.Stats(); s.Fetches != 0 || s.Wanted != 2 {
		t.Fatalf("before Run: %+v; want no fetches and 2 wanted", s)
	}
	h.run()
	for sha := range shas {
		h.waitState(sha, Fetched)
	}
	if s := h.f.Stats(); s.Fetches != 2 || s.Succeeded != 2 {
		t.Errorf("Stats = %+v; want exactly 2 fetches", s)
	}
}

func TestBoundedConcurrency(t *testing.T) {
	const limit, n = 2, 6
	h := newHarness(t, func(o *Options) { o.Concurrency = limit })
	h.src.gated = true
	var refs []BundleRef
	for i := range n {
		data := bundle(fmt.Sprint(i))
		loc := fmt.Sprintf("s3://bundles/p%d.tgz", i)
		h.src.put(loc, data)
		refs = append(refs, BundleRef{Location: loc, Sha256: shaOf(data)})
	}
	h.run()
	h.f.Want(refs)

	for range limit {
		<-h.src.started
	}
	// Dispatch marks attempts in flight under the lock before starting them,
	// so an unbounded dispatch would already show here.
	if s := h.f.Stats(); s.InFlight != limit || s.Fetches != limit {
		t.Fatalf("with %d wanted and limit %d: %+v", n, limit, s)
	}
	for i := range n {
		h.src.release <- nil
		if i < n-limit {
			<-h.src.started // the freed slot is taken by the next bundle
		}
	}
	for _, r := range refs {
		h.waitState(r.Sha256, Fetched)
	}
	if p := h.src.peakConcurrency(); p != limit {
		t.Errorf("peak concurrent fetches = %d; want %d", p, limit)
	}
	if s := h.f.Stats(); s.Fetches != n || s.InFlight != 0 {
		t.Errorf("Stats = %+v; want %d fetches, none in flight", s, n)
	}
}

func TestFetchErrorRetriedWithGrowingBackoff(t *testing.T) {
	h := newHarness(t, nil)
	data := bundle("flaky")
	sha := shaOf(data)
	loc := "s3://bundles/flaky.tgz"
	h.src.put(loc, data)
	h.src.setFail(loc, errors.New("503 Service Unavailable"))
	h.run()
	h.f.Want([]BundleRef{{Location: loc, Sha256: sha}})

	var delays []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		r := h.waitAttempts(sha, attempt)
		if r.State != Failed || r.Reason != ReasonFetchError || !strings.Contains(r.Message, "fetching "+loc+": 503 Service Unavailable") {
			t.Fatalf("attempt %d: %+v; want Failed/FetchError naming the location and cause", attempt, r)
		}
		d := r.RetryAt.Sub(h.clock.Now())
		if want := backoff(attempt, time.Second, time.Minute, 0.5); d != want {
			t.Errorf("attempt %d: retry in %v; want %v", attempt, d, want)
		}
		delays = append(delays, d)
		if attempt == 4 {
			// The storage recovers before the fifth attempt is due.
			h.src.setFail(loc, nil)
		}
		h.clock.SetTime(r.RetryAt)
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] <= delays[i-1] {
			t.Errorf("backoff did not grow: %v", delays)
		}
	}

	r := h.waitState(sha, Fetched)
	if r.Attempts != 5 || r.Reason != "" || r.Message != "" {
		t.Errorf("after recovery: %+v; want Fetched after 5 attempts with no reason", r)
	}
}

func TestIntegrityErrorNotRetriedUntilRefChanges(t *testing.T) {
	h := newHarness(t, nil)
	good := bundle("good")
	sha := shaOf(good)
	h.src.put("s3://bundles/tampered.tgz", []byte("not what PLM compiled"))
	h.src.put("s3://bundles/recompiled.tgz", good)
	sentinel := bundle("sentinel")
	h.src.put("s3://bundles/sentinel.tgz", sentinel)
	h.run()

	bad := BundleRef{Location: "s3://bundles/tampered.tgz", Sha256: sha}
	h.f.Want([]BundleRef{bad})
	r := h.waitState(sha, Failed)
	if r.Reason != ReasonIntegrityError || !r.RetryAt.IsZero() || !strings.Contains(r.Message, "sha256 mismatch") ||
		!strings.Contains(r.Message, sha) || !strings.Contains(r.Message, bad.Location) {
		t.Fatalf("Result = %+v; want IntegrityError naming location and sha, no retry", r)
	}
	if _, err := os.Stat(filepath.Join(h.dir, sha)); !os.IsNotExist(err) {
		t.Errorf("a mismatching bundle reached the cache: %v", err)
	}
	if entries, _ := os.ReadDir(h.dir); len(entries) != 0 {
		t.Errorf("cache dir not empty after a mismatch: %v", entries)
	}

	// Same wanted set, time passes, other work happens: no new attempt.
	h.clock.Step(24 * time.Hour)
	h.f.Want([]BundleRef{bad, {Location: "s3://bundles/sentinel.tgz", Sha256: shaOf(sentinel)}})
	h.waitState(shaOf(sentinel), Fetched)
	if got := h.f.Stats().Attempts[sha]; got != 1 {
		t.Fatalf("attempts after an unchanged Want = %d; want 1", got)
	}
	if r := h.f.Result(sha); r.Reason != ReasonIntegrityError {
		t.Fatalf("Result = %+v; want still IntegrityError", r)
	}

	// PLM recompiled: the location changed, so it is fetched again.
	h.f.Want([]BundleRef{{Location: "s3://bundles/recompiled.tgz", Sha256: sha}})
	r = h.waitState(sha, Fetched)
	if r.Attempts != 2 || h.f.Stats().Attempts[sha] != 2 {
		t.Errorf("after the reference changed: %+v, stats %v; want Fetched on attempt 2", r, h.f.Stats().Attempts)
	}
}

func TestIntegrityErrorTriesOtherLocationsOfTheSameSha(t *testing.T) {
	h := newHarness(t, nil)
	good := bundle("good")
	sha := shaOf(good)
	// Sorted order makes the bad location the first tried.
	h.src.put("s3://bundles/a-tampered.tgz", []byte("tampered"))
	h.src.put("s3://bundles/b-good.tgz", good)
	h.run()
	h.f.Want([]BundleRef{
		{Location: "s3://bundles/a-tampered.tgz", Sha256: sha},
		{Location: "s3://bundles/b-good.tgz", Sha256: sha},
	})
	r := h.waitState(sha, Fetched)
	if r.Attempts != 2 {
		t.Errorf("Result = %+v; want Fetched on the second location", r)
	}
}

func TestWantRemovingRefStopsRetries(t *testing.T) {
	h := newHarness(t, nil)
	failing := BundleRef{Location: "s3://bundles/missing.tgz", Sha256: shaOf(bundle("missing"))}
	sentinel := bundle("sentinel")
	h.src.put("s3://bundles/sentinel.tgz", sentinel)
	h.run()

	h.f.Want([]BundleRef{failing})
	r := h.waitState(failing.Sha256, Failed)
	if r.RetryAt.IsZero() {
		t.Fatalf("Result = %+v; want a retry scheduled", r)
	}

	h.f.Want(nil)
	if r := h.f.Result(failing.Sha256); r.State != Pending || r.Message != NotWanted {
		t.Errorf("after Want(nil): %+v; want the failure forgotten", r)
	}
	if s := h.f.Stats(); s.Wanted != 0 {
		t.Errorf("Stats = %+v; want nothing wanted", s)
	}
	h.clock.SetTime(r.RetryAt.Add(time.Hour))
	h.f.Want([]BundleRef{{Location: "s3://bundles/sentinel.tgz", Sha256: shaOf(sentinel)}})
	h.waitState(shaOf(sentinel), Fetched)
	if got := h.f.Stats().Attempts[failing.Sha256]; got != 1 {
		t.Errorf("attempts of the dropped ref = %d; want 1", got)
	}

	// Wanted again: a fresh start, fetched at once, attempt count reset.
	h.f.Want([]BundleRef{failing})
	r = h.waitAttempts(failing.Sha256, 1)
	if r.State != Failed || h.f.Stats().Attempts[failing.Sha256] != 2 {
		t.Errorf("re-wanted: %+v (stats %d); want a new first attempt", r, h.f.Stats().Attempts[failing.Sha256])
	}
}

func TestCacheLoadVerifiesAndRefetchesCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	good, corrupt := bundle("good"), bundle("corrupt")
	goodSha, corruptSha := shaOf(good), shaOf(corrupt)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(goodSha, good)
	write(corruptSha, corrupt[:len(corrupt)-3]) // truncated by a crash or a bad disk
	write(tempPrefix+goodSha+"-123", good[:4])
	write("README", []byte("not ours"))

	h := newHarness(t, func(o *Options) { o.CacheDir = dir })
	h.dir = dir
	if s := h.f.Stats(); s.CacheLoaded != 1 || s.CacheDiscarded != 1 {
		t.Errorf("Stats = %+v; want 1 loaded, 1 discarded", s)
	}
	for name, want := range map[string]bool{corruptSha: false, tempPrefix + goodSha + "-123": false, "README": true, goodSha: true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s exists = %v; want %v", name, err == nil, want)
		}
	}

	h.src.put("s3://bundles/good.tgz", good)
	h.src.put("s3://bundles/corrupt.tgz", corrupt)
	h.f.Want([]BundleRef{
		{Location: "s3://bundles/good.tgz", Sha256: goodSha},
		{Location: "s3://bundles/corrupt.tgz", Sha256: corruptSha},
	})
	// No Run yet: the intact bundle is available without any fetch.
	if r := h.f.Result(goodSha); r.State != Fetched || r.Path != filepath.Join(dir, goodSha) || r.Attempts != 0 {
		t.Errorf("cached bundle: %+v; want Fetched from the cache", r)
	}
	if r := h.f.Result(corruptSha); r.State != Pending {
		t.Errorf("discarded bundle: %+v; want Pending", r)
	}
	h.run()
	h.waitState(corruptSha, Fetched)
	if s := h.f.Stats(); s.Attempts[goodSha] != 0 || s.Attempts[corruptSha] != 1 {
		t.Errorf("attempts = %v; want only the corrupt one refetched", s.Attempts)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, corruptSha)); string(got) != string(corrupt) {
		t.Errorf("refetched file = %q", got)
	}
}

func TestFailedUpdateKeepsOldBundle(t *testing.T) {
	h := newHarness(t, nil)
	v1, v2 := bundle("v1"), bundle("v2")
	h.src.put("s3://bundles/v1.tgz", v1)
	h.src.setFail("s3://bundles/v2.tgz", errors.New("403 Forbidden"))
	h.run()

	h.f.Want([]BundleRef{{Location: "s3://bundles/v1.tgz", Sha256: shaOf(v1)}})
	old := h.waitState(shaOf(v1), Fetched)

	// PLM recompiled; the status now names v2 only.
	h.f.Want([]BundleRef{{Location: "s3://bundles/v2.tgz", Sha256: shaOf(v2)}})
	r := h.waitState(shaOf(v2), Failed)
	if r.Reason != ReasonFetchError || !strings.Contains(r.Message, "403 Forbidden") {
		t.Errorf("new bundle: %+v; want FetchError", r)
	}
	if r := h.f.Result(shaOf(v1)); r.State != Fetched || r.Path != old.Path {
		t.Errorf("old bundle: %+v; want still Fetched at %s", r, old.Path)
	}

	// Prune keeps what the caller still runs.
	if n, err := h.f.Prune([]string{shaOf(v1)}); n != 0 || err != nil {
		t.Errorf("Prune(keep v1) = %d, %v; want nothing removed", n, err)
	}
	if n, err := h.f.Prune(nil); n != 1 || err != nil {
		t.Errorf("Prune(nil) = %d, %v; want v1 removed", n, err)
	}
	if r := h.f.Result(shaOf(v1)); r.State != Pending {
		t.Errorf("pruned bundle: %+v", r)
	}
	if _, err := os.Stat(old.Path); !os.IsNotExist(err) {
		t.Errorf("pruned file still there: %v", err)
	}
}

func TestCredentialOrTLSChangeRetriesAtOnce(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MinBackoff, o.MaxBackoff = time.Hour, time.Hour })
	data := bundle("x")
	loc := "s3://bundles/x.tgz"
	h.src.put(loc, data)
	h.src.setFail(loc, errors.New("403 Forbidden"))
	h.run()
	h.f.Want([]BundleRef{{Location: loc, Sha256: shaOf(data)}})
	r := h.waitState(shaOf(data), Failed)
	if !r.RetryAt.After(h.clock.Now()) {
		t.Fatalf("Result = %+v; want a retry in the future", r)
	}

	h.f.SetCredentials("admin", "same-old") // changes from anonymous: retried, still failing
	h.waitAttempts(shaOf(data), 2)
	h.f.SetCredentials("admin", "same-old") // no change: no retry
	if err := h.f.SetTLS(TLSSettings{CAPEM: []byte("garbage")}); err == nil || !strings.Contains(err.Error(), "ca.crt") {
		t.Errorf("SetTLS(garbage) = %v; want an error naming ca.crt", err)
	}

	h.src.setFail(loc, nil)
	if err := h.f.SetTLS(TLSSettings{SkipVerify: true}); err != nil {
		t.Fatal(err)
	}
	r = h.waitState(shaOf(data), Fetched)
	if r.Attempts != 3 {
		t.Errorf("Result = %+v; want Fetched on attempt 3 without the clock moving", r)
	}
}

func TestInvalidReferences(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	goodSha := shaOf(bundle("x"))
	h.f.Want([]BundleRef{
		{Location: "s3://bundles/x.tgz", Sha256: "NOT-A-SHA"},
		{Location: "s3://bundles/../etc/passwd", Sha256: goodSha},
	})
	if r := h.f.Result("NOT-A-SHA"); r.State != Failed || r.Reason != ReasonInvalidReference || !strings.Contains(r.Message, "invalid sha256") {
		t.Errorf("bad sha: %+v", r)
	}
	if r := h.f.Result(goodSha); r.State != Failed || r.Reason != ReasonInvalidReference || !strings.Contains(r.Message, `".." path segment`) {
		t.Errorf("bad location: %+v", r)
	}
	// PLM fixes the location: fetched.
	h.src.put("s3://bundles/x.tgz", bundle("x"))
	h.f.Want([]BundleRef{{Location: "s3://bundles/x.tgz", Sha256: goodSha}})
	h.waitState(goodSha, Fetched)
	if s := h.f.Stats(); s.Fetches != 1 {
		t.Errorf("Stats = %+v; want only the valid reference fetched", s)
	}
}

func TestRunStopCancelsAndNextRunResumes(t *testing.T) {
	h := newHarness(t, nil)
	h.src.gated = true
	data := bundle("slow")
	h.src.put("s3://bundles/slow.tgz", data)
	h.run()
	h.f.Want([]BundleRef{{Location: "s3://bundles/slow.tgz", Sha256: shaOf(data)}})
	<-h.src.started
	h.stop() // returns only after the attempt saw the cancellation
	if r := h.f.Result(shaOf(data)); r.State != Pending || r.Attempts != 0 {
		t.Errorf("after stop: %+v; want Pending, the cut attempt not counted as a failure", r)
	}
	h.src.gated = false
	h.run()
	h.waitState(shaOf(data), Fetched)
}

func TestNewValidatesOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Endpoint: "ftp://x", CacheDir: t.TempDir()}, "http:// or https://"},
		{Options{Endpoint: "http://x/path", CacheDir: t.TempDir()}, "no path"},
		{Options{Endpoint: "", CacheDir: t.TempDir()}, "http:// or https://"},
		{Options{Endpoint: "http://x"}, "cache directory"},
		{Options{Endpoint: "http://x", CacheDir: t.TempDir(), Concurrency: -1}, "concurrency"},
		{Options{Endpoint: "http://x", CacheDir: t.TempDir(), MinBackoff: time.Minute, MaxBackoff: time.Second}, "backoff"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v; want an error about %q", tc.opts, err, tc.want)
		}
	}
}

func TestRunTwiceFails(t *testing.T) {
	h := newHarness(t, nil)
	data := bundle("x")
	h.src.put("s3://bundles/x.tgz", data)
	h.run()
	h.f.Want([]BundleRef{{Location: "s3://bundles/x.tgz", Sha256: shaOf(data)}})
	h.waitState(shaOf(data), Fetched) // proves Run is running
	if err := h.f.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Run = %v; want an error", err)
	}
}

func TestOnlyBadLocationLeftIsNotRetried(t *testing.T) {
	h := newHarness(t, nil)
	sha := shaOf(bundle("good"))
	h.src.put("s3://bundles/a-tampered.tgz", []byte("tampered"))
	h.src.setFail("s3://bundles/b-flaky.tgz", errors.New("503 Service Unavailable"))
	sentinel := bundle("sentinel")
	h.src.put("s3://bundles/sentinel.tgz", sentinel)
	h.run()
	tampered := BundleRef{Location: "s3://bundles/a-tampered.tgz", Sha256: sha}
	h.f.Want([]BundleRef{tampered, {Location: "s3://bundles/b-flaky.tgz", Sha256: sha}})
	r := h.waitAttempts(sha, 2) // a: mismatch, then b: 503 and a backoff
	if r.Reason != ReasonFetchError || r.RetryAt.IsZero() {
		t.Fatalf("after both locations failed: %+v; want a FetchError retry pending", r)
	}

	h.f.Want([]BundleRef{tampered}) // PLM dropped the flaky location
	r = h.f.Result(sha)
	if r.State != Failed || r.Reason != ReasonIntegrityError || !r.RetryAt.IsZero() || !strings.Contains(r.Message, "a-tampered.tgz") {
		t.Fatalf("only the tampered location left: %+v; want IntegrityError, no retry", r)
	}
	h.clock.Step(time.Hour)
	h.f.Want([]BundleRef{tampered, {Location: "s3://bundles/sentinel.tgz", Sha256: shaOf(sentinel)}})
	h.waitState(shaOf(sentinel), Fetched)
	if got := h.f.Stats().Attempts[sha]; got != 2 {
		t.Errorf("attempts = %d; want 2", got)
	}
}

// TestIntegrityErrorRetriedWhenPLMStatusChanges: PLM may process an object
// again and report the same location and sha256 (it rewrote the object, or
// storage healed); the new revision (status.processing.datetime) gives the
// location a new chance, once per revision.
func TestIntegrityErrorRetriedWhenPLMStatusChanges(t *testing.T) {
	h := newHarness(t, nil)
	good := bundle("good")
	sha := shaOf(good)
	const loc = "s3://bundles/policy.tgz"
	h.src.put(loc, []byte("half-written by PLM"))
	sentinel := bundle("sentinel")
	h.src.put("s3://bundles/sentinel.tgz", sentinel)
	h.run()
	ref := func(rev string) BundleRef { return BundleRef{Location: loc, Sha256: sha, Revision: rev} }

	h.f.Want([]BundleRef{ref("2026-01-01T00:00:00Z")})
	if r := h.waitState(sha, Failed); r.Reason != ReasonIntegrityError {
		t.Fatalf("Result = %+v; want IntegrityError", r)
	}

	// The same revision, from another object reporting no revision too, a
	// day later: not fetched again.
	h.clock.Step(24 * time.Hour)
	h.f.Want([]BundleRef{ref("2026-01-01T00:00:00Z"), ref(""), {Location: "s3://bundles/sentinel.tgz", Sha256: shaOf(sentinel)}})
	h.waitState(shaOf(sentinel), Fetched)
	if got := h.f.Stats().Attempts[sha]; got != 1 {
		t.Fatalf("attempts with an unchanged revision = %d; want 1", got)
	}

	// Only a reference without a revision (a policy's recorded status, in a
	// snapshot whose PLM object is stale or unreadable): nothing says PLM
	// processed the object again, so not fetched again, then or after.
	other := bundle("another sentinel")
	h.src.put("s3://bundles/other.tgz", other)
	h.f.Want([]BundleRef{ref(""), {Location: "s3://bundles/other.tgz", Sha256: shaOf(other)}})
	h.waitState(shaOf(other), Fetched)
	h.f.Want([]BundleRef{ref("2026-01-01T00:00:00Z")})
	h.clock.Step(24 * time.Hour)
	h.f.Want([]BundleRef{ref("2026-01-01T00:00:00Z"), {Location: "s3://bundles/other.tgz", Sha256: shaOf(other)}})
	if got := h.f.Stats().Attempts[sha]; got != 1 {
		t.Fatalf("attempts after a reference without a revision = %d; want 1", got)
	}

	// PLM processed it again, still mismatching: one more attempt, no more.
	h.f.Want([]BundleRef{ref("2026-01-02T00:00:00Z")})
	h.waitAttempts(sha, 2)
	if r := h.waitState(sha, Failed); r.Reason != ReasonIntegrityError || !r.RetryAt.IsZero() {
		t.Fatalf("Result = %+v; want IntegrityError, no retry scheduled", r)
	}
	h.clock.Step(24 * time.Hour)
	h.f.Want([]BundleRef{ref("2026-01-02T00:00:00Z"), {Location: "s3://bundles/sentinel.tgz", Sha256: shaOf(sentinel)}})
	h.waitState(shaOf(sentinel), Fetched)
	if got := h.f.Stats().Attempts[sha]; got != 2 {
		t.Fatalf("attempts after the second revision = %d; want 2", got)
	}

	// PLM wrote the right bytes and processed the object again.
	h.src.put(loc, good)
	h.f.Want([]BundleRef{ref("2026-01-03T00:00:00Z")})
	if r := h.waitState(sha, Fetched); h.f.Stats().Attempts[sha] != 3 {
		t.Errorf("Result = %+v, attempts %d; want Fetched on attempt 3", r, h.f.Stats().Attempts[sha])
	}
}
