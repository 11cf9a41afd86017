package agent

import (
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Refusals are logged at most logSampleBurst times per logSampleInterval
// for each kind (refused RPCs, refused connections, failed TLS handshakes):
// any pod can reach the agent port, and a flood of refusals must not flood
// the log. The first line logged after some were dropped says how many.
const (
	logSampleInterval = 10 * time.Second
	logSampleBurst    = 10
)

// logSampler decides which of a stream of similar events are logged.
type logSampler struct {
	now func() time.Time

	mu      sync.Mutex
	start   time.Time // of the current interval
	logged  int       // in the current interval
	dropped int       // since the last line logged
}

func newLogSampler(now func() time.Time) *logSampler {
	return &logSampler{now: now}
}

// take says whether to log this event and, if so, how many events were
// dropped since the last one logged.
func (l *logSampler) take() (log bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= logSampleInterval {
		l.start, l.logged = now, 0
	}
	if l.logged >= logSampleBurst {
		l.dropped++
		return false, 0
	}
	l.logged++
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

// info logs msg with keysAndValues on log if this event is sampled, adding
// how many were dropped before it (refusalsNotLogged) when some were.
func (l *logSampler) info(log logr.Logger, msg string, keysAndValues ...any) {
	ok, dropped := l.take()
	if !ok {
		return
	}
	if dropped > 0 {
		keysAndValues = append(keysAndValues, "refusalsNotLogged", dropped)
	}
	log.Info(msg, keysAndValues...)
}
