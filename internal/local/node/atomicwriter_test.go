package node

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomicSwapsContentAndRemovesStaleEntries(t *testing.T) {
	dir := t.TempDir()
	if err := writeAtomic(dir, map[string]file{
		"a.conf":     {data: []byte("one"), mode: 0o644},
		"sub/b.conf": {data: []byte("two"), mode: 0o600},
	}); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "a.conf"), "one", 0o644)
	assertFile(t, filepath.Join(dir, "sub", "b.conf"), "two", 0o600)
	first, _ := os.Readlink(filepath.Join(dir, dataLink))

	// Same payload: nothing rewritten.
	if err := writeAtomic(dir, map[string]file{
		"a.conf":     {data: []byte("one"), mode: 0o644},
		"sub/b.conf": {data: []byte("two"), mode: 0o600},
	}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Readlink(filepath.Join(dir, dataLink)); again != first {
		t.Errorf("unchanged payload rewrote the data dir: %s -> %s", first, again)
	}

	if err := writeAtomic(dir, map[string]file{"a.conf": {data: []byte("three"), mode: 0o400}}); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "a.conf"), "three", 0o400)
	if _, err := os.Lstat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Errorf("entry removed from the payload still present: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("old data dir %s not removed", first)
	}
}

func TestWriteAtomicRejectsEscapingPaths(t *testing.T) {
	for _, p := range []string{"../x", "/abs", ""} {
		if err := writeAtomic(t.TempDir(), map[string]file{p: {data: nil, mode: 0o644}}); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func assertFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != content {
		t.Errorf("%s = %q, want %q", path, data, content)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != mode {
		t.Errorf("%s mode = %o, want %o", path, info.Mode().Perm(), mode)
	}
}
