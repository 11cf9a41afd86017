package plm

import "time"

// backoff is the delay before the next attempt after `failures` consecutive
// failed ones (failures >= 1). It doubles with each failure ("equal jitter"):
// base = min·2^failures capped at max, and the delay is drawn from
// [base/2, base] by jitter in [0, 1). Every delay therefore lies in
// [min, max], the expected delay doubles, and bundles that failed together
// (storage down) spread out instead of retrying in lock-step.
func backoff(failures int, minDelay, maxDelay time.Duration, jitter float64) time.Duration {
	base := minDelay
	for i := 0; i < failures && base < maxDelay; i++ {
		base *= 2
	}
	base = min(base, maxDelay)
	half := base / 2
	d := half + time.Duration(jitter*float64(base-half))
	return max(minDelay, min(d, maxDelay))
}
