package agent

import (
	"sync"
	"time"
)

const (
	// acceptedTTL is how long an Authenticator's acceptance of a token is
	// reused. A deleted or stopped pod's agent is refused at the latest this
	// long after.
	acceptedTTL = 30 * time.Second
	// refusedTTL is how long a refusal is repeated without asking the
	// Authenticator again: a peer sending the same bad token in a loop costs
	// one TokenReview every few seconds. Kept short because a refusal can
	// stop holding (a pod labelled a moment later); nginx-agent does not
	// retry a refusal by itself anyway.
	refusedTTL = 5 * time.Second
	// maxVerdicts bounds each of the two caches. A full cache first drops
	// what expired, then everything: a flood of distinct bad tokens churns
	// the refusals, never the acceptances.
	maxVerdicts = 4096
)

// verdicts caches what the Authenticator said about tokens, keyed by the
// token's SHA-256 (the tokens themselves are not kept). Lookups never
// block on anything but the cache's own lock: the tap reads it.
// Retry-later refusals are never cached: they may pass on the next try.
type verdicts struct {
	now func() time.Time

	mu       sync.Mutex
	accepted map[[32]byte]acceptedToken
	refused  map[[32]byte]refusedToken
}

type acceptedToken struct {
	id      Identity
	expires time.Time
}

type refusedToken struct {
	err     error
	expires time.Time
}

func newVerdicts(now func() time.Time) *verdicts {
	return &verdicts{now: now, accepted: make(map[[32]byte]acceptedToken), refused: make(map[[32]byte]refusedToken)}
}

// get returns the cached verdict on a token: its identity, or the error it
// was refused with. ok is false when there is none.
func (v *verdicts) get(sum [32]byte) (id Identity, refusal error, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	if a, found := v.accepted[sum]; found && now.Before(a.expires) {
		return a.id, nil, true
	}
	if r, found := v.refused[sum]; found && now.Before(r.expires) {
		return Identity{}, r.err, true
	}
	return Identity{}, nil, false
}

func (v *verdicts) accept(sum [32]byte, id Identity) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	makeRoom(v.accepted, now, func(a acceptedToken) time.Time { return a.expires })
	delete(v.refused, sum)
	v.accepted[sum] = acceptedToken{id: id, expires: now.Add(acceptedTTL)}
}

func (v *verdicts) refuse(sum [32]byte, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	makeRoom(v.refused, now, func(r refusedToken) time.Time { return r.expires })
	delete(v.accepted, sum)
	v.refused[sum] = refusedToken{err: err, expires: now.Add(refusedTTL)}
}

// makeRoom drops expired entries of a full cache, and everything when all
// are fresh.
func makeRoom[E any](m map[[32]byte]E, now time.Time, expires func(E) time.Time) {
	if len(m) < maxVerdicts {
		return
	}
	for k, e := range m {
		if !now.Before(expires(e)) {
			delete(m, k)
		}
	}
	if len(m) >= maxVerdicts {
		clear(m)
	}
}
