package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
)

// TestLogSampler: a flood of refusals logs logSampleBurst lines per
// interval; the first line after some were dropped says how many.
func TestLogSampler(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newLogSampler(func() time.Time { return now })
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	for range 1000 {
		l.info(log, "Refused an agent", "reason", "unknown token")
	}
	if len(lines) != logSampleBurst {
		t.Fatalf("%d of 1000 refusals logged in one interval, want %d", len(lines), logSampleBurst)
	}
	if strings.Contains(strings.Join(lines, "\n"), "refusalsNotLogged") {
		t.Fatalf("lines of the first interval report dropped ones:\n%s", strings.Join(lines, "\n"))
	}
	now = now.Add(logSampleInterval)
	l.info(log, "Refused an agent", "reason", "unknown token")
	l.info(log, "Refused an agent", "reason", "unknown token")
	if want := `"refusalsNotLogged"=990`; len(lines) != logSampleBurst+2 || !strings.Contains(lines[logSampleBurst], want) {
		t.Fatalf("the first line of the next interval is %q, want it to say %s", lines[logSampleBurst:], want)
	}
	if strings.Contains(lines[logSampleBurst+1], "refusalsNotLogged") {
		t.Fatal("the dropped count was reported twice")
	}
}
