package node

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// file is one file of a rendered volume.
type file struct {
	data []byte
	mode fs.FileMode
}

const dataLink = "..data"

// writeAtomic makes dir hold exactly payload (relative path → file) the way
// the kubelet's atomic writer does: the files live in a timestamped
// directory, "..data" points at it and every top-level entry is a symlink
// through "..data". Swapping "..data" with a rename updates all files at once
// for processes reading the volume through a bind mount. Unchanged payloads
// are not rewritten.
func writeAtomic(dir string, payload map[string]file) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating volume dir: %w", err)
	}
	for p := range payload {
		if filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") || p == "" {
			return fmt.Errorf("invalid volume path %q", p)
		}
	}
	if current, err := os.Readlink(filepath.Join(dir, dataLink)); err == nil && sameContent(filepath.Join(dir, current), payload) {
		return nil
	}
	tsDir, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	if err := os.Chmod(tsDir, 0o755); err != nil {
		return fmt.Errorf("chmod data dir: %w", err)
	}
	for p, f := range payload {
		full := filepath.Join(tsDir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("creating dir for %s: %w", p, err)
		}
		if err := os.WriteFile(full, f.data, f.mode); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
		// WriteFile's mode is filtered by the umask; the volume's is exact.
		if err := os.Chmod(full, f.mode); err != nil {
			return fmt.Errorf("chmod %s: %w", p, err)
		}
	}
	old, _ := os.Readlink(filepath.Join(dir, dataLink))
	tmpLink := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		return fmt.Errorf("linking data dir: %w", err)
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataLink)); err != nil {
		return fmt.Errorf("swapping data dir: %w", err)
	}
	if err := syncTopLevel(dir, payload); err != nil {
		return err
	}
	if old != "" && old != filepath.Base(tsDir) {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			return fmt.Errorf("removing old data dir: %w", err)
		}
	}
	return nil
}

// syncTopLevel links every top-level payload entry through ..data and
// removes links for entries no longer in the payload.
func syncTopLevel(dir string, payload map[string]file) error {
	want := map[string]bool{}
	for p := range payload {
		want[strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")[0]] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading volume dir: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") || want[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("removing stale %s: %w", e.Name(), err)
		}
	}
	for _, name := range sortedKeys(want) {
		link := filepath.Join(dir, name)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join(dataLink, name) {
			continue
		}
		_ = os.RemoveAll(link)
		if err := os.Symlink(filepath.Join(dataLink, name), link); err != nil {
			return fmt.Errorf("linking %s: %w", name, err)
		}
	}
	return nil
}

func sameContent(dataDir string, payload map[string]file) bool {
	count := 0
	err := filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dataDir, path)
		f, ok := payload[rel]
		if !ok {
			return fs.ErrNotExist
		}
		info, err := d.Info()
		if err != nil || info.Mode().Perm() != f.mode.Perm() {
			return fs.ErrNotExist
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(data, f.data) {
			return fs.ErrNotExist
		}
		count++
		return nil
	})
	return err == nil && count == len(payload)
}
