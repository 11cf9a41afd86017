package s3test

import (
	"fmt"
	"os"
	"sync"
)

// TB is what the servers need of the test that runs them: a *testing.T,
// or a Main where no test runs yet (TestMain).
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// Main is a TB for a server that a TestMain starts for every test of its
// package. A failure panics with a MainFailure (Run turns it into an
// error); cleanups run at Close.
type Main struct {
	mu       sync.Mutex
	cleanups []func()
}

// MainFailure is the panic value of a Main's Fatal.
type MainFailure struct{ Msg string }

func (m *Main) Helper()                           {}
func (m *Main) Fatal(args ...any)                 { panic(MainFailure{fmt.Sprint(args...)}) }
func (m *Main) Fatalf(format string, args ...any) { panic(MainFailure{fmt.Sprintf(format, args...)}) }

// Errorf reports on stderr: it is called while stopping, where nothing
// else can report.
func (m *Main) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "s3test: "+format+"\n", args...)
}

func (m *Main) TempDir() string {
	dir, err := os.MkdirTemp("", "s3test-")
	if err != nil {
		m.Fatal(err)
	}
	m.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (m *Main) Cleanup(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cleanups = append(m.cleanups, f)
}

// Close runs the cleanups, last first.
func (m *Main) Close() {
	m.mu.Lock()
	fs := m.cleanups
	m.cleanups = nil
	m.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// Run calls f, returning a failure of the Main's as an error.
func (m *Main) Run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fail, ok := r.(MainFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s", fail.Msg)
		}
	}()
	f()
	return nil
}
