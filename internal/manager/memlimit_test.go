package manager

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// noMemoryLimit is the Go runtime's limit when none is set.
const noMemoryLimit = math.MaxInt64

func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name, file, content string
		want                int64
		err                 bool
	}{
		{"v2 limit", "memory.max", "536870912\n", 536870912, false},
		{"v2 unlimited", "memory.max", "max\n", 0, false},
		{"v1 limit", "memory/memory.limit_in_bytes", "268435456\n", 268435456, false},
		{"v1 unlimited", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"no cgroup files", "", "", 0, false},
		{"garbage", "memory.max", "lots\n", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if c.file != "" {
				p := filepath.Join(root, c.file)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := cgroupMemoryLimit(root)
			if got != c.want || (err != nil) != c.err {
				t.Errorf("got %d, %v; want %d, error %v", got, err, c.want, c.err)
			}
		})
	}
}

// TestSetMemoryLimit: 90% of the cgroup's limit becomes the runtime's soft
// limit, unless GOMEMLIMIT says otherwise.
func TestSetMemoryLimit(t *testing.T) {
	t.Cleanup(func() { debug.SetMemoryLimit(noMemoryLimit) })
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "memory.max"), []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMEMLIMIT", "")
	got, err := SetMemoryLimit(root)
	if err != nil || got != 900000000 || debug.SetMemoryLimit(-1) != 900000000 {
		t.Fatalf("set %d (%v), runtime has %d; want 900000000", got, err, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(noMemoryLimit)
	t.Setenv("GOMEMLIMIT", "200MiB")
	if got, err := SetMemoryLimit(root); got != 0 || err != nil || debug.SetMemoryLimit(-1) != noMemoryLimit {
		t.Errorf("with GOMEMLIMIT set: set %d (%v), runtime has %d; want nothing changed", got, err, debug.SetMemoryLimit(-1))
	}
}
