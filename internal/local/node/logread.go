package node

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// logOptions are the kubelet's /containerLogs query options.
type logOptions struct {
	since      time.Time // entries at or after; zero means all
	tailLines  int       // last n entries; 0 or less means all
	limitBytes int64     // stop after this many bytes; 0 means no limit
	timestamps bool
	follow     context.Context // when set, keep streaming until done or ctx ends
}

// readLog writes the log at path to w as `kubectl logs` expects: the message
// of each entry, prefixed by its time when timestamps is set. With follow,
// it then streams new entries until done is closed and the file is drained.
func readLog(path string, o logOptions, done <-chan struct{}, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening container log: %w", err)
	}
	defer f.Close()
	lw := &limitedWriter{w: w, left: o.limitBytes}
	br := bufio.NewReaderSize(f, 64*1024)
	var ring []string // the last tailLines entries, before the first EOF
	var pending string
	caughtUp, finished := false, false
	for {
		line, err := br.ReadString('\n')
		pending += line
		if err == nil {
			out, ok := formatEntry(pending, o)
			pending = ""
			if !ok {
				continue
			}
			if !caughtUp && o.tailLines > 0 {
				if len(ring) == o.tailLines {
					ring = ring[1:]
				}
				ring = append(ring, out)
				continue
			}
			if done, err := lw.write(out); done {
				return err
			}
			if fl, ok := w.(interface{ Flush() }); ok && caughtUp {
				fl.Flush()
			}
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading container log: %w", err)
		}
		if !caughtUp {
			caughtUp = true
			for _, e := range ring {
				if done, err := lw.write(e); done {
					return err
				}
			}
			ring = nil
		}
		if o.follow == nil {
			return nil
		}
		if finished {
			return nil
		}
		// Once the writer is done, one more pass drains what it wrote since
		// this EOF.
		select {
		case <-done:
			finished = true
		case <-o.follow.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// formatEntry turns a stored entry into output, or reports it filtered out.
func formatEntry(line string, o logOptions) (string, bool) {
	ts, rest, ok := strings.Cut(line, " ")
	if !ok {
		return "", false
	}
	_, msg, ok := strings.Cut(rest, " ")
	if !ok {
		return "", false
	}
	if !o.since.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || t.Before(o.since) {
			return "", false
		}
	}
	if o.timestamps {
		return ts + " " + msg, true
	}
	return msg, true
}

// limitedWriter writes up to limitBytes, then reports done.
type limitedWriter struct {
	w    io.Writer
	left int64 // 0: unlimited
}

// write writes s (cut at the limit); done means stop reading.
func (l *limitedWriter) write(s string) (done bool, err error) {
	if l.left > 0 {
		if int64(len(s)) >= l.left {
			_, err := io.WriteString(l.w, s[:l.left])
			return true, err
		}
		l.left -= int64(len(s))
	}
	_, err = io.WriteString(l.w, s)
	return err != nil, err
}
