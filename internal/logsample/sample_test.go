package logsample

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

func collect(lines *[]string) logr.Logger {
	return funcr.New(func(_, args string) { *lines = append(*lines, args) }, funcr.Options{})
}

// TestSampler: a flood of lines writes Burst per interval; the first line
// after some were dropped says how many.
func TestSampler(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s := New(func() time.Time { return now }, "refusalsNotLogged")
	var lines []string
	log := collect(&lines)
	for range 1000 {
		s.Info(log, "Refused an agent", "reason", "unknown token")
	}
	if len(lines) != Burst {
		t.Fatalf("%d of 1000 lines written in one interval, want %d", len(lines), Burst)
	}
	if strings.Contains(strings.Join(lines, "\n"), "refusalsNotLogged") {
		t.Fatalf("lines of the first interval report dropped ones:\n%s", strings.Join(lines, "\n"))
	}
	now = now.Add(Interval)
	s.Info(log, "Refused an agent", "reason", "unknown token")
	s.Info(log, "Refused an agent", "reason", "unknown token")
	if want := `"refusalsNotLogged"=990`; len(lines) != Burst+2 || !strings.Contains(lines[Burst], want) {
		t.Fatalf("the first line of the next interval is %q, want it to say %s", lines[Burst:], want)
	}
	if strings.Contains(lines[Burst+1], "refusalsNotLogged") {
		t.Fatal("the dropped count was reported twice")
	}
}

// TestKeyed: each key has its own burst, so one flooding key does not
// silence another; the keys kept are bounded, and a key forgotten while it
// had lines to report is only forgotten when every key has.
func TestKeyed(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	k := NewKeyed[string](func() time.Time { return now }, "linesNotLogged", 3)
	var lines []string
	log := collect(&lines)
	for range 100 {
		k.Info("flooder", log, "ack")
	}
	k.Info("quiet", log, "ack")
	if len(lines) != Burst+1 {
		t.Fatalf("%d lines, want %d: the flooder's burst and the quiet key's line", len(lines), Burst+1)
	}
	// The map is full (flooder, quiet, third): a fourth key makes room by
	// forgetting the keys with nothing to report once their interval ends.
	k.Info("third", log, "ack")
	now = now.Add(Interval)
	k.Info("fourth", log, "ack")
	if len(k.keys) > 3 {
		t.Fatalf("%d keys kept, at most 3", len(k.keys))
	}
	if _, ok := k.keys["flooder"]; !ok {
		t.Fatal("the flooder, whose dropped lines are not reported yet, was forgotten while others had nothing to report")
	}
	k.Info("flooder", log, "ack")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"linesNotLogged"=90`) {
		t.Fatalf("the flooder's next line is %q, want it to report 90 dropped", last)
	}
	// A flood of keys keeps at most max of them.
	for i := range 100 {
		k.Info(fmt.Sprint("key-", i), log, "ack")
	}
	if len(k.keys) > 3 {
		t.Fatalf("%d keys kept after a flood of keys, at most 3", len(k.keys))
	}
}
