package agent

import (
	"testing"
	"time"
)

// TestLogSampler: a flood of refusals logs logSampleBurst lines per
// interval; the first line after some were dropped says how many.
func TestLogSampler(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newLogSampler(func() time.Time { return now })
	logged := 0
	for range 1000 {
		if ok, dropped := l.take(); ok {
			logged++
			if dropped != 0 {
				t.Fatalf("line %d reports %d dropped within the first interval", logged, dropped)
			}
		}
	}
	if logged != logSampleBurst {
		t.Fatalf("%d of 1000 refusals logged in one interval, want %d", logged, logSampleBurst)
	}
	now = now.Add(logSampleInterval)
	ok, dropped := l.take()
	if !ok || dropped != 1000-logSampleBurst {
		t.Fatalf("first refusal of the next interval: logged %v, dropped %d; want logged with %d dropped", ok, dropped, 1000-logSampleBurst)
	}
	if _, dropped := l.take(); dropped != 0 {
		t.Fatalf("the dropped count was reported twice (%d)", dropped)
	}
}
