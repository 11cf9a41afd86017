package node

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// logWriter records a container's stdout and stderr into one file, one entry
// per line: "<RFC3339Nano time> <stream> <line>". The time lets the kubelet
// endpoint honour sinceTime and timestamps.
type logWriter struct {
	path string
	mu   sync.Mutex
	f    *os.File
	wg   sync.WaitGroup
	done chan struct{} // closed when both streams ended
}

// newLogWriter creates the log file and returns the write ends to give the
// process as stdout and stderr. The caller closes them once the process has
// started; the log completes when every holder has closed them.
func newLogWriter(path string) (lw *logWriter, stdout, stderr *os.File, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("creating container log: %w", err)
	}
	lw = &logWriter{path: path, f: f, done: make(chan struct{})}
	outR, outW, err := os.Pipe()
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		f.Close()
		outR.Close()
		outW.Close()
		return nil, nil, nil, fmt.Errorf("creating stderr pipe: %w", err)
	}
	lw.wg.Add(2)
	go lw.copy(outR, "stdout")
	go lw.copy(errR, "stderr")
	go func() {
		lw.wg.Wait()
		lw.f.Close()
		close(lw.done)
	}()
	return lw, outW, errW, nil
}

func (lw *logWriter) copy(r *os.File, stream string) {
	defer lw.wg.Done()
	defer r.Close()
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				line += "\n"
			}
			lw.mu.Lock()
			_, _ = fmt.Fprintf(lw.f, "%s %s %s", time.Now().UTC().Format(time.RFC3339Nano), stream, line)
			lw.mu.Unlock()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				lw.mu.Lock()
				_, _ = fmt.Fprintf(lw.f, "%s stderr [local node: reading %s: %v]\n", time.Now().UTC().Format(time.RFC3339Nano), stream, err)
				lw.mu.Unlock()
			}
			return
		}
	}
}

// lastLines returns up to n of the last lines of the log's messages, for
// termination messages (FallbackToLogsOnError).
func (lw *logWriter) lastLines(n int) string {
	var b strings.Builder
	_ = readLog(lw.path, logOptions{tailLines: n}, nil, &b)
	return b.String()
}
