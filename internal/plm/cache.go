package plm

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"

	apiplm "github.com/gatewall/gatewall/api/plm"
)

// tempPrefix marks files being written; they never have a sha256 name, so a
// crash mid-write can never leave a file that looks like a bundle.
const tempPrefix = ".tmp-"

// cache is a directory of bundles, each named by its sha256.
type cache struct {
	dir string
}

// cachedFile is a verified bundle in the cache.
type cachedFile struct {
	path    string
	modTime time.Time
	size    int64
}

func newCache(dir string) (*cache, error) {
	if dir == "" {
		return nil, errors.New("cache directory: empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	return &cache{dir: dir}, nil
}

func (c *cache) path(sha string) string { return filepath.Join(c.dir, sha) }

// load verifies every bundle in the directory, removes those that do not
// match their name and temp files left by a crash, and returns the rest.
// Files with other names are left alone: the directory may be shared.
func (c *cache) load(log logr.Logger) (files map[string]cachedFile, discarded int, err error) {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, 0, fmt.Errorf("reading cache directory: %w", err)
	}
	files = make(map[string]cachedFile)
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(c.dir, name)
		if strings.HasPrefix(name, tempPrefix) {
			if err := os.Remove(p); err != nil {
				log.Error(err, "Removing a partial cache file", "path", p)
			}
			continue
		}
		if apiplm.ValidateSha256(name) != nil || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err == nil {
			err = verifyFile(p, name)
		}
		if err != nil {
			log.Info("Discarding a cached bundle that does not verify; it will be fetched again when wanted", "path", p, "reason", err.Error())
			if rmErr := os.Remove(p); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
				return nil, discarded, fmt.Errorf("removing corrupt cache file: %w", rmErr)
			}
			discarded++
			continue
		}
		files[name] = cachedFile{path: p, modTime: info.ModTime(), size: info.Size()}
	}
	return files, discarded, nil
}

func verifyFile(path, sha string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("content has sha256 %s", got)
	}
	return nil
}

// store copies r into the cache if its content has the given sha256. The
// file appears under its final name only complete, verified and synced, so a
// reader or a crash never sees a partial bundle. A mismatch returns an
// *IntegrityError (Location left for the caller to fill in). It returns the
// file's path and size.
func (c *cache) store(sha string, r io.Reader, maxSize int64) (path string, size int64, err error) {
	tmp, err := os.CreateTemp(c.dir, tempPrefix+sha+"-*")
	if err != nil {
		return "", 0, fmt.Errorf("creating cache file: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, maxSize+1))
	if err != nil {
		return "", 0, fmt.Errorf("reading bundle: %w", err)
	}
	if n > maxSize {
		return "", 0, fmt.Errorf("bundle larger than the maximum of %d bytes", maxSize)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return "", 0, &IntegrityError{Want: sha, Got: got, Size: n}
	}
	if err := tmp.Sync(); err != nil {
		return "", 0, fmt.Errorf("syncing cache file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", 0, fmt.Errorf("closing cache file: %w", err)
	}
	final := c.path(sha)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", 0, fmt.Errorf("renaming cache file: %w", err)
	}
	// The rename is durable only once the directory is synced.
	if d, err := os.Open(c.dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return final, n, nil
}

func (c *cache) remove(sha string) error {
	if err := os.Remove(c.path(sha)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing cached bundle %s: %w", sha, err)
	}
	return nil
}
