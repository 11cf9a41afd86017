package plm

import (
	"testing"
	"time"
)

func TestBackoffGrowsWithJitterAndIsCapped(t *testing.T) {
	const minD, maxD = time.Second, 60 * time.Second
	jitters := []float64{0, 0.25, 0.5, 0.999}

	for _, j := range jitters {
		prev := time.Duration(0)
		for n := 1; n <= 20; n++ {
			d := backoff(n, minD, maxD, j)
			if d < minD || d > maxD {
				t.Fatalf("backoff(%d, jitter %v) = %v; want within [%v, %v]", n, j, d, minD, maxD)
			}
			if d < prev {
				t.Fatalf("backoff(%d, jitter %v) = %v shrank from %v", n, j, d, prev)
			}
			prev = d
		}
		if got := backoff(20, minD, maxD, j); got < maxD/2 {
			t.Errorf("backoff(20, jitter %v) = %v; want it capped near %v", j, got, maxD)
		}
	}

	// Without jitter the delay doubles from min: [base/2, base] with base = min·2^n.
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i, w := range want {
		if got := backoff(i+1, minD, maxD, 0); got != w*time.Second {
			t.Errorf("backoff(%d, jitter 0) = %v; want %v", i+1, got, w*time.Second)
		}
	}
	// Jitter spreads the delay over the upper half of the interval.
	if lo, hi := backoff(3, minD, maxD, 0), backoff(3, minD, maxD, 0.999); hi <= lo || hi > 8*time.Second {
		t.Errorf("backoff(3) with jitter 0 = %v and 0.999 = %v; want 4s < ... <= 8s", lo, hi)
	}
	if got := backoff(40, minD, maxD, 0.999); got > maxD || got < maxD-time.Second {
		t.Errorf("backoff(40, 0.999) = %v; want just under the cap %v", got, maxD)
	}
	// A cap below 2·min still respects both bounds.
	if got := backoff(1, time.Second, time.Second, 0); got != time.Second {
		t.Errorf("backoff with min = max = 1s: %v", got)
	}
}
