package faults

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewall/gatewall/test/testenv"
)

// nginxWatch samples, every 20 ms, what one data-plane pod's NGINX would load
// and what it reloaded: the configuration files on disk (/etc/nginx, but for
// the agent's hidden temporary and backup files, which NGINX never reads),
// and the master's newest worker (a reload starts new workers). The workers
// of one reload are forked one after another, and on a loaded machine a
// sample can fall between two forks: a newer worker started within
// generationGap of the last one seen belongs to the same reload.
type nginxWatch struct {
	master int
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	files   map[string]map[string]bool // path -> digests of its contents seen
	reloads []reload
	errs    []string
}

// reload is a reload seen: when, its newest worker and when that started
// (since boot), and the configuration on disk then.
type reload struct {
	at      time.Time
	worker  int
	started time.Duration
	config  snapshot
}

func (r reload) String() string {
	return fmt.Sprintf("%s (worker %d started at %s)", r.at.Format("15:04:05.000"), r.worker, r.started)
}

// snapshot is a configuration on disk: each file's path and the digest of
// its content.
type snapshot map[string]string

func (s snapshot) String() string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(s)) {
		fmt.Fprintf(&b, "%s=%s ", p, s[p])
	}
	return strings.TrimSpace(b.String())
}

func watchNGINX(t *testing.T, master int) *nginxWatch {
	w := &nginxWatch{master: master, stop: make(chan struct{}), done: make(chan struct{}), files: map[string]map[string]bool{}}
	worker := w.newestWorker()
	started := start(worker)
	w.sample()
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			s := w.sample()
			if nw := w.newestWorker(); nw != worker && nw != 0 {
				prev := started
				worker, started = nw, start(nw)
				if started-prev < generationGap {
					continue // another worker of the reload seen last
				}
				w.mu.Lock()
				w.reloads = append(w.reloads, reload{time.Now(), worker, started, s})
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(w.halt)
	return w
}

func (w *nginxWatch) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

func (w *nginxWatch) dir() string {
	return filepath.Join("/proc", strconv.Itoa(w.master), "root", "etc", "nginx")
}

// sample records the files on disk and returns them.
func (w *nginxWatch) sample() snapshot {
	s, err := readConfig(w.dir())
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if _, gone := os.Stat(fmt.Sprintf("/proc/%d", w.master)); gone == nil {
			w.errs = append(w.errs, err.Error())
		}
		return nil
	}
	for p, d := range s {
		if w.files[p] == nil {
			w.files[p] = map[string]bool{}
		}
		w.files[p][d] = true
	}
	return s
}

// newestWorker is the highest PID among the master's children.
func (w *nginxWatch) newestWorker() int {
	return slices.Max(append(testenv.Children(w.master), 0))
}

// start is when process pid started, since boot; 0 if it is gone.
func start(pid int) time.Duration {
	at, _ := testenv.ProcessTimes(pid)
	return at
}

// generationGap separates the workers of two reloads: the agent reloads at
// most once per reload monitoring period (1 s on the local runtime).
const generationGap = 500 * time.Millisecond

// readConfig reads every file under dir but hidden ones. A file renamed
// away while the directory is read is left out.
func readConfig(dir string) (snapshot, error) {
	s := snapshot{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		s[rel] = fmt.Sprintf("%x(%d)", sum[:6], len(data))
		return nil
	})
	return s, err
}

// current is the configuration on disk now.
func (w *nginxWatch) current(t *testing.T) snapshot {
	t.Helper()
	s, err := readConfig(w.dir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// check stops the watch and fails the test unless every file on disk only
// ever held its content of before or of after (never a partial one), and
// NGINX reloaded only with exactly after, at most maxReloads times. It
// returns the number of reloads.
func (w *nginxWatch) check(t *testing.T, before, after snapshot, maxReloads int) int {
	t.Helper()
	w.halt()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.errs {
		t.Errorf("reading NGINX's configuration: %s", e)
	}
	for _, p := range slices.Sorted(maps.Keys(w.files)) {
		for d := range w.files[p] {
			if d != before[p] && d != after[p] {
				t.Errorf("NGINX's %s held %s, neither its last good content (%s) nor its new one (%s)", p, d, before[p], after[p])
			}
		}
	}
	for _, r := range w.reloads {
		if !maps.Equal(r.config, after) {
			t.Errorf("NGINX reloaded at %s with [%s] on disk, not the new configuration [%s]", r.at.Format(time.RFC3339Nano), r.config, after)
		}
	}
	if len(w.reloads) > maxReloads {
		t.Errorf("NGINX reloaded %d times, want at most %d: %v", len(w.reloads), maxReloads, w.reloads)
	}
	return len(w.reloads)
}

// reloadsBefore is how many reloads the watch saw before at.
func (w *nginxWatch) reloadsBefore(at time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.reloads {
		if r.at.Before(at) {
			n++
		}
	}
	return n
}
