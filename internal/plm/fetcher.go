package plm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	apiplm "github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/metrics"
)

// Fetcher fetches wanted bundles into the cache. Its methods are safe for
// concurrent use.
type Fetcher struct {
	opts    Options
	log     logr.Logger
	storage *s3Storage
	source  objectSource
	cache   *cache

	// wake tells Run to recompute when the next retry is due.
	wake    chan struct{}
	workers sync.WaitGroup

	mu       sync.Mutex
	runCtx   context.Context // set while Run runs; attempts derive from it
	entries  map[string]*entry
	cached   map[string]cachedFile
	inFlight map[string]*entry // by sha256: at most one attempt per bundle
	// cachedBytes is the size of the cached bundles; reserved what the
	// attempts in flight may add (reserveLocked).
	cachedBytes, reserved int64
	stats                 Stats
	// held keeps attempts from starting until the storage settings are
	// first read (Hold, Release); heldWhy is what Pending results say.
	held, released bool
	heldWhy        string
}

// entry is one wanted sha256.
type entry struct {
	sha string
	// locations are the valid wanted locations holding it, sorted.
	locations []string
	// bad maps locations whose object failed verification to the failure;
	// they are not fetched again while wanted with the same revision.
	bad map[string]badLocation
	// revisions are the PLM status revisions each location is wanted with.
	revisions map[string]revisions
	// due is when the next attempt may start; zero when none is scheduled.
	due time.Time
	// failures counts consecutive FetchErrors and drives the backoff.
	failures int
	result   Result
}

// badLocation is an object that failed verification, and the revision of
// the PLM status that reported it then.
type badLocation struct {
	msg      string
	revision string
}

func (e *entry) goodLocations() []string {
	var good []string
	for _, l := range e.locations {
		if _, bad := e.bad[l]; !bad {
			good = append(good, l)
		}
	}
	return good
}

// New loads and verifies the cache; bundles found intact are Fetched at once.
// Credentials are anonymous and TLS uses the system roots until
// SetCredentials and SetTLS say otherwise.
func New(opts Options) (*Fetcher, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("plm fetcher options: %w", err)
	}
	storage, err := newS3Storage(opts.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("plm fetcher: %w", err)
	}
	c, err := newCache(opts.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("plm fetcher: %w", err)
	}
	files, discarded, err := c.load(opts.Log)
	if err != nil {
		return nil, fmt.Errorf("plm fetcher: %w", err)
	}
	f := &Fetcher{
		opts:     opts,
		log:      opts.Log,
		storage:  storage,
		source:   opts.source,
		cache:    c,
		wake:     make(chan struct{}, 1),
		entries:  make(map[string]*entry),
		cached:   files,
		inFlight: make(map[string]*entry),
		stats: Stats{
			Attempts:       make(map[string]int),
			CacheLoaded:    len(files),
			CacheDiscarded: discarded,
		},
	}
	if f.source == nil {
		f.source = storage
	}
	for _, c := range files {
		f.cachedBytes += c.size
	}
	f.log.V(1).Info("Loaded bundle cache", "dir", opts.CacheDir, "bundles", len(files), "discarded", discarded)
	return f, nil
}

// Run starts the attempts that are due, now and whenever retries come due,
// until ctx ends; it then waits for the attempts in flight to stop. Want may
// be called before Run: the fetches start when Run does.
func (f *Fetcher) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.runCtx != nil {
		f.mu.Unlock()
		return errors.New("plm fetcher: Run is already running")
	}
	f.runCtx = ctx
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.runCtx = nil
		f.mu.Unlock()
		f.workers.Wait()
	}()

	for ctx.Err() == nil {
		now := f.opts.Clock.Now()
		f.mu.Lock()
		f.dispatchLocked(now)
		next := f.nextDueLocked()
		f.mu.Unlock()

		var timer clock.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			d := next.Sub(f.opts.Clock.Now())
			if d <= 0 {
				continue
			}
			timer = f.opts.Clock.NewTimer(d)
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-f.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
	return nil
}

// Want declares the full set of bundles currently wanted. New sha256s are
// Fetched at once when cached, else fetched in the background; sha256s no
// longer wanted stop being retried and their failures are forgotten (their
// cached bundles stay available). A location that failed verification is
// tried again when its revision changes. Invalid references are reported as
// Failed with ReasonInvalidReference, keyed by the sha256 string as given.
func (f *Fetcher) Want(refs []BundleRef) {
	// locs maps each sha256's valid locations to their revisions.
	locs := make(map[string]map[string]revisions)
	problems := make(map[string][]string)
	for _, r := range refs {
		if locs[r.Sha256] == nil {
			locs[r.Sha256] = make(map[string]revisions)
		}
		if err := f.opts.Scope.Admits(r.Location); err != nil {
			problems[r.Sha256] = append(problems[r.Sha256], fmt.Sprintf("%.64q: %v", r.Location, err))
			continue
		}
		locs[r.Sha256][r.Location] = locs[r.Sha256][r.Location].with(r.Revision)
	}

	now := f.opts.Clock.Now()
	f.mu.Lock()
	before := f.snapshotLocked(slices.Concat(slices.Collect(maps.Keys(f.entries)), slices.Collect(maps.Keys(locs))))
	for sha := range f.entries {
		if _, ok := locs[sha]; !ok {
			delete(f.entries, sha)
		}
	}
	for sha, l := range locs {
		e := f.entries[sha]
		if e == nil {
			e = &entry{sha: sha, bad: make(map[string]badLocation), result: Result{State: Pending, Message: "waiting for the first fetch"}}
			f.entries[sha] = e
		}
		f.updateLocked(e, l, problems[sha], now)
	}
	f.dispatchLocked(now)
	changed := f.changedLocked(before)
	f.mu.Unlock()
	f.poke()
	f.notify(changed)
}

// updateLocked applies a Want to one entry.
func (f *Fetcher) updateLocked(e *entry, locs map[string]revisions, problems []string, now time.Time) {
	if err := apiplm.ValidateSha256(e.sha); err != nil {
		e.locations, e.due = nil, time.Time{}
		e.result = Result{State: Failed, Reason: ReasonInvalidReference, Message: err.Error()}
		return
	}
	e.locations = slices.Sorted(maps.Keys(locs))
	e.revisions = locs
	for l, b := range e.bad {
		// No longer wanted, or PLM processed the object again (a new
		// revision): a new chance. A location wanted without a revision (only
		// a policy's recorded status names it, the PLM object being stale or
		// unreadable in that snapshot) says nothing about a change.
		if rev, ok := locs[l]; !ok || len(rev) > 0 && rev.String() != b.revision {
			delete(e.bad, l)
		}
	}
	if len(e.locations) == 0 {
		e.due = time.Time{}
		e.result = Result{State: Failed, Reason: ReasonInvalidReference, Message: strings.Join(problems, "; ")}
		return
	}
	if e.result.State == Fetched {
		return
	}
	if c, ok := f.cached[e.sha]; ok {
		e.due = time.Time{}
		e.result = Result{State: Fetched, Path: c.path, FetchedAt: c.modTime, Attempts: e.result.Attempts}
		return
	}
	if len(e.goodLocations()) == 0 {
		// Only locations already known to hold other bytes are left.
		e.due = time.Time{}
		e.result = Result{State: Failed, Reason: ReasonIntegrityError, Message: e.bad[e.locations[0]].msg, Attempts: e.result.Attempts}
		return
	}
	if e.result.Reason == ReasonInvalidReference {
		e.result = Result{State: Pending, Message: "waiting for the first fetch", Attempts: e.result.Attempts}
	}
	f.scheduleNowLocked(e, now)
}

// revisions are the distinct non-empty revisions a location is wanted with
// (several PLM objects may report the same bundle), sorted.
type revisions []string

func (r revisions) with(rev string) revisions {
	if rev == "" || slices.Contains(r, rev) {
		return r
	}
	out := append(slices.Clone(r), rev)
	slices.Sort(out)
	return out
}

func (r revisions) String() string { return strings.Join(r, ",") }

// scheduleNowLocked makes an idle entry due now if it has a location left to
// try; entries backing off keep their schedule.
func (f *Fetcher) scheduleNowLocked(e *entry, now time.Time) {
	if !e.due.IsZero() || f.inFlight[e.sha] != nil || e.result.State == Fetched ||
		e.result.Reason == ReasonInvalidReference || len(e.goodLocations()) == 0 {
		return
	}
	e.due = now
	if e.result.State == Failed {
		e.result.RetryAt = now
	}
}

// dispatchLocked starts the due attempts that fit in the concurrency bound,
// earliest first.
func (f *Fetcher) dispatchLocked(now time.Time) {
	if f.held || f.runCtx == nil || f.runCtx.Err() != nil {
		return
	}
	var due []*entry
	for _, e := range f.entries {
		if !e.due.IsZero() && !e.due.After(now) && f.inFlight[e.sha] == nil {
			due = append(due, e)
		}
	}
	slices.SortFunc(due, func(a, b *entry) int {
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		return strings.Compare(a.sha, b.sha)
	})
	for _, e := range due {
		if len(f.inFlight) >= f.opts.Concurrency {
			return
		}
		good := e.goodLocations()
		if len(good) == 0 { // updateLocked prevents this; never divide by zero
			e.due = time.Time{}
			continue
		}
		loc := good[e.result.Attempts%len(good)] // rotate when a sha256 has several
		e.due = time.Time{}
		f.inFlight[e.sha] = e
		f.stats.Fetches++
		f.stats.Attempts[e.sha]++
		f.workers.Add(1)
		go f.attempt(f.runCtx, e, loc)
	}
}

// nextDueLocked is when Run must wake for a retry; zero when completions
// (which dispatch themselves) or Want will.
func (f *Fetcher) nextDueLocked() time.Time {
	if f.held || len(f.inFlight) >= f.opts.Concurrency {
		return time.Time{}
	}
	var next time.Time
	for _, e := range f.entries {
		if !e.due.IsZero() && f.inFlight[e.sha] == nil && (next.IsZero() || e.due.Before(next)) {
			next = e.due
		}
	}
	return next
}

func (f *Fetcher) attempt(runCtx context.Context, e *entry, loc string) {
	defer f.workers.Done()
	start := f.opts.Clock.Now()
	path, size, reserved, err := f.fetch(runCtx, e.sha, loc)
	now := f.opts.Clock.Now()
	if runCtx.Err() == nil {
		countFetch(size, err, now.Sub(start))
	}

	f.mu.Lock()
	before := f.snapshotLocked([]string{e.sha})
	delete(f.inFlight, e.sha)
	f.reserved -= reserved
	f.completeLocked(runCtx, e, loc, path, size, err, now)
	f.dispatchLocked(now)
	changed := f.changedLocked(before)
	f.mu.Unlock()
	f.poke()
	f.notify(changed)
}

func (f *Fetcher) completeLocked(runCtx context.Context, e *entry, loc, path string, size int64, err error, now time.Time) {
	cur := f.entries[e.sha]
	var integrity *IntegrityError
	switch {
	case err == nil:
		f.stats.Succeeded++
		f.cached[e.sha] = cachedFile{path: path, modTime: now, size: size}
		f.cachedBytes += size
		if cur != nil {
			attempts := cur.result.Attempts
			if cur == e {
				attempts++
			}
			cur.due, cur.failures = time.Time{}, 0
			cur.result = Result{State: Fetched, Path: path, FetchedAt: now, Attempts: attempts}
		}
		f.log.V(1).Info("Fetched bundle", "location", loc, "sha256", e.sha)
		return
	case runCtx.Err() != nil:
		// Run is stopping: not a failure; the next Run starts it again.
		if cur != nil {
			f.scheduleNowLocked(cur, now)
		}
		return
	case errors.As(err, &integrity):
		f.stats.IntegrityErrors++
	default:
		f.stats.FetchErrors++
	}
	f.log.Error(err, "Fetching bundle failed", "sha256", e.sha)

	if cur != e {
		// The sha256 was dropped (and maybe wanted again) meanwhile: the
		// failure belongs to a forgotten reference.
		if cur != nil {
			f.scheduleNowLocked(cur, now)
		}
		return
	}
	e.result = Result{State: Failed, Message: err.Error(), Attempts: e.result.Attempts + 1}
	if integrity != nil {
		e.result.Reason = ReasonIntegrityError
		if rev, ok := e.revisions[loc]; ok {
			e.bad[loc] = badLocation{msg: e.result.Message, revision: rev.String()}
		}
		// Another location may hold the right bytes; this one is not retried.
		f.scheduleNowLocked(e, now)
		return
	}
	e.failures++
	e.due = now.Add(backoff(e.failures, f.opts.MinBackoff, f.opts.MaxBackoff, f.opts.Jitter()))
	e.result.Reason = ReasonFetchError
	e.result.RetryAt = e.due
}

// fetch downloads one object into the cache, verifying its sha256. It
// returns the file's path and size, and the cache space it reserved, which
// the caller gives back (f.reserved) under the lock it records the file
// with.
func (f *Fetcher) fetch(runCtx context.Context, sha, loc string) (string, int64, int64, error) {
	ctx, cancel := context.WithTimeout(runCtx, f.opts.AttemptTimeout)
	defer cancel()
	bucket, key, err := apiplm.ParseLocation(loc)
	if err != nil {
		return "", 0, 0, &FetchError{Location: loc, Err: err} // Want let only valid ones through
	}
	body, size, err := f.source.Open(ctx, bucket, key)
	if err != nil {
		return "", 0, 0, &FetchError{Location: loc, Err: err}
	}
	defer body.Close()
	if size > f.opts.MaxBundleSize {
		return "", 0, 0, &FetchError{Location: loc, Err: fmt.Errorf("object is %d bytes, more than the maximum of %d", size, f.opts.MaxBundleSize)}
	}
	// An object of unknown size may take up to the largest bundle allowed.
	need := size
	if need < 0 {
		need = f.opts.MaxBundleSize
	}
	f.mu.Lock()
	evicted, err := f.reserveLocked(need)
	f.mu.Unlock()
	f.notify(evicted)
	if err != nil {
		return "", 0, 0, &FetchError{Location: loc, Err: err}
	}
	path, n, err := f.cache.store(sha, body, need)
	var integrity *IntegrityError
	if errors.As(err, &integrity) {
		integrity.Location = loc
		return "", 0, need, integrity
	}
	if err != nil {
		return "", 0, need, &FetchError{Location: loc, Err: err}
	}
	return path, n, need, nil
}

// reserveLocked reserves n bytes of the cache for a fetch, evicting cached
// bundles nobody wants (no entry: neither PLM's current bundles of served
// policies nor the ones their statuses record in force), the least recently
// fetched first, as far as needed. It fails, evicting nothing, when the
// wanted bundles leave no room. It returns the sha256s evicted.
func (f *Fetcher) reserveLocked(n int64) ([]string, error) {
	limit := f.opts.MaxCacheSize
	used := f.cachedBytes + f.reserved
	if used+n <= limit {
		f.reserved += n
		return nil, nil
	}
	var evictable []string
	freeable := int64(0)
	for sha, c := range f.cached {
		if f.entries[sha] == nil && f.inFlight[sha] == nil {
			evictable = append(evictable, sha)
			freeable += c.size
		}
	}
	if used-freeable+n > limit {
		return nil, fmt.Errorf("the WAF bundle cache is full: a bundle of %d bytes does not fit beside the %d bytes the wanted bundles take, within the %d bytes --plm-cache-max-size allows",
			n, used-freeable, limit)
	}
	slices.SortFunc(evictable, func(a, b string) int {
		if c := f.cached[a].modTime.Compare(f.cached[b].modTime); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var evicted []string
	for _, sha := range evictable {
		if used+n <= limit {
			break
		}
		if err := f.cache.remove(sha); err != nil {
			return evicted, err
		}
		used -= f.cached[sha].size
		f.cachedBytes -= f.cached[sha].size
		delete(f.cached, sha)
		evicted = append(evicted, sha)
	}
	f.log.Info("Evicted WAF bundles no policy wants to make room in the cache", "evicted", len(evicted), "maxCacheSize", limit)
	f.reserved += n
	return evicted, nil
}

// Counts are the bundles in the cache and the wanted ones by state, for
// the metrics.
func (f *Fetcher) Counts() metrics.BundleCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := metrics.BundleCounts{Cached: len(f.cached), Wanted: map[string]int{}}
	for _, e := range f.entries {
		c.Wanted[string(e.result.State)]++
	}
	return c
}

// NotWanted is the message of a bundle nobody declared wanted and the cache
// does not hold: the fetcher only fetches what Want declares.
const NotWanted = "not fetched: Gatewall fetches the bundles of the policies attached to its Gateways, and has not seen this one wanted yet"

// Result reports what is known about a sha256: the wanted entry's state, or
// Fetched for a bundle in the cache, or Pending with the message NotWanted
// for anything else.
func (f *Fetcher) Result(sha256 string) Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resultLocked(sha256)
}

func (f *Fetcher) resultLocked(sha string) Result {
	if e := f.entries[sha]; e != nil {
		if f.held && e.result.State == Pending {
			r := e.result
			r.Message = f.heldWhy
			return r
		}
		return e.result
	}
	if c, ok := f.cached[sha]; ok {
		return Result{State: Fetched, Path: c.path, FetchedAt: c.modTime}
	}
	return Result{State: Pending, Message: NotWanted}
}

// SetCredentials replaces the storage credentials for later requests; ""
// for both means anonymous. A change retries failed fetches at once.
func (f *Fetcher) SetCredentials(accessKeyID, secretAccessKey string) {
	if f.storage.setCredentials(accessKeyID, secretAccessKey) {
		f.log.Info("Storage credentials changed; retrying failed fetches", "accessKeyID", accessKeyID)
		f.retryFailed()
	}
}

// SetTLS replaces the TLS settings for later requests (idle connections are
// closed). Invalid settings are rejected and the current ones kept. A change
// retries failed fetches at once.
func (f *Fetcher) SetTLS(t TLSSettings) error {
	changed, err := f.storage.setTLS(t)
	if err != nil {
		return fmt.Errorf("plm storage TLS settings: %w", err)
	}
	if changed {
		f.log.Info("Storage TLS settings changed; retrying failed fetches")
		f.retryFailed()
	}
	return nil
}

// retryFailed cuts short the backoff of FetchErrors: new credentials or
// certificates are the likeliest fix. IntegrityErrors stay: their bytes
// would not change.
func (f *Fetcher) retryFailed() {
	now := f.opts.Clock.Now()
	f.mu.Lock()
	before := f.snapshotLocked(slices.Collect(maps.Keys(f.entries)))
	for _, e := range f.entries {
		if e.result.Reason == ReasonFetchError && e.due.After(now) {
			e.due, e.result.RetryAt = now, now
		}
	}
	f.dispatchLocked(now)
	changed := f.changedLocked(before)
	f.mu.Unlock()
	f.poke()
	f.notify(changed)
}

// Prune removes cached bundles that are neither wanted nor in keep (e.g. the
// bundles the data planes still run); the caller decides when, since only it
// knows what is still deployed. It returns how many were removed.
func (f *Fetcher) Prune(keep []string) (int, error) {
	f.mu.Lock()
	var removed []string
	var errs []error
	for sha := range f.cached {
		if f.entries[sha] != nil || f.inFlight[sha] != nil || slices.Contains(keep, sha) {
			continue
		}
		if err := f.cache.remove(sha); err != nil {
			errs = append(errs, err)
			continue
		}
		f.cachedBytes -= f.cached[sha].size
		delete(f.cached, sha)
		removed = append(removed, sha)
	}
	f.mu.Unlock()
	slices.Sort(removed)
	f.notify(removed)
	return len(removed), errors.Join(errs...)
}

// Stats returns a copy of the counters.
func (f *Fetcher) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.Attempts = maps.Clone(f.stats.Attempts)
	s.Wanted = len(f.entries)
	s.InFlight = len(f.inFlight)
	return s
}

func (f *Fetcher) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *Fetcher) snapshotLocked(shas []string) map[string]Result {
	s := make(map[string]Result, len(shas))
	for _, sha := range shas {
		s[sha] = f.resultLocked(sha)
	}
	return s
}

func (f *Fetcher) changedLocked(before map[string]Result) []string {
	var changed []string
	for sha, r := range before {
		if !f.resultLocked(sha).equal(r) {
			changed = append(changed, sha)
		}
	}
	slices.Sort(changed)
	return changed
}

func (f *Fetcher) notify(shas []string) {
	for _, sha := range shas {
		f.opts.OnChange(sha)
	}
}
