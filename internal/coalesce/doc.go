// Package coalesce holds the manager's newest-wins queues: work handed
// for a key again before it ran is done once, with the newest input.
//
//   - Jobs runs the newest job per key on a pool of workers, one key at a
//     time, retrying failures with backoff (status writes).
//   - Calls calls a function for each key changed since its last call, from
//     a goroutine of its own, never blocking the caller (the agent server's
//     notifications to the manager).
//   - Keys is the set both build on for callers that drain it themselves
//     (the controllers' wake-ups).
package coalesce
