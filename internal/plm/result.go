package plm

import "time"

// State is where a bundle stands.
type State string

// States of a bundle.
const (
	// Fetched: the verified bundle is in the cache at Result.Path.
	Fetched State = "Fetched"
	// Pending: the bundle has not been fetched yet (first attempt not done,
	// or the sha256 is not wanted and not cached).
	Pending State = "Pending"
	// Failed: the last attempt failed; Reason and Message say why and
	// RetryAt when the next attempt starts (zero: not retried until the wanted
	// reference changes).
	Failed State = "Failed"
)

// Reason qualifies a Failed state; the values suit a Kubernetes condition.
type Reason string

// Reasons of a Failed state.
const (
	// ReasonFetchError: storage could not be reached, refused the request, or
	// the bundle could not be stored; retried with backoff.
	ReasonFetchError Reason = "FetchError"
	// ReasonIntegrityError: the object's sha256 differs from the one PLM
	// reported; not retried until the wanted reference or its revision
	// changes.
	ReasonIntegrityError Reason = "IntegrityError"
	// ReasonInvalidReference: the sha256 or every location for it is
	// malformed; nothing is fetched until PLM reports something valid.
	ReasonInvalidReference Reason = "InvalidReference"
)

// Result is what the Fetcher knows about one sha256.
type Result struct {
	State  State
	Reason Reason
	// Message is human-readable, for status conditions.
	Message string
	// Path is the verified cache file when State is Fetched.
	Path string
	// FetchedAt is when the bundle was stored in the cache (for a bundle
	// found in the cache at start, the file's modification time).
	FetchedAt time.Time
	// Attempts counts the fetch attempts since the sha256 became wanted.
	Attempts int
	// RetryAt is when the next attempt is due when State is Failed; zero when
	// no retry is scheduled.
	RetryAt time.Time
}

func (r Result) equal(o Result) bool {
	return r.State == o.State && r.Reason == o.Reason && r.Message == o.Message &&
		r.Path == o.Path && r.FetchedAt.Equal(o.FetchedAt) && r.Attempts == o.Attempts &&
		r.RetryAt.Equal(o.RetryAt)
}

// Stats are counters for tests and measurements.
type Stats struct {
	// Attempts counts network fetch attempts per sha256 since New.
	Attempts map[string]int
	// Fetches counts network fetch attempts in total.
	Fetches int
	// Succeeded, FetchErrors and IntegrityErrors split Fetches by outcome
	// (attempts cut short by Run's context ending are in none of them).
	Succeeded, FetchErrors, IntegrityErrors int
	// CacheLoaded counts bundles New found intact in the cache;
	// CacheDiscarded the files it removed because they did not verify.
	CacheLoaded, CacheDiscarded int
	// Wanted is the number of sha256s currently wanted; InFlight the number
	// being fetched right now.
	Wanted, InFlight int
}
