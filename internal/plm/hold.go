package plm

import (
	"maps"
	"slices"
)

// Hold keeps fetches from starting until Release, and makes every Pending
// result say why. It is for the time before the storage settings are first
// read: a fetch made meanwhile would go out without the configured
// credentials or certificates, fail, and report that failure in the
// policies' statuses until the retry. Once released, Hold does nothing: new
// settings that cannot be used leave the previous ones in force instead.
// Calling it again while held replaces the reason.
func (f *Fetcher) Hold(why string) {
	f.mu.Lock()
	if f.released {
		f.mu.Unlock()
		return
	}
	before := f.snapshotLocked(slices.Collect(maps.Keys(f.entries)))
	f.held = true
	f.heldWhy = why
	changed := f.changedLocked(before)
	f.mu.Unlock()
	f.notify(changed)
}

// Release lets fetches start, for good.
func (f *Fetcher) Release() {
	now := f.opts.Clock.Now()
	f.mu.Lock()
	if f.released {
		f.mu.Unlock()
		return
	}
	before := f.snapshotLocked(slices.Collect(maps.Keys(f.entries)))
	f.released, f.held, f.heldWhy = true, false, ""
	f.dispatchLocked(now)
	changed := f.changedLocked(before)
	f.mu.Unlock()
	f.poke()
	f.notify(changed)
}
