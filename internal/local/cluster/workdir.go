package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// workDirMarker marks a directory as a local cluster's work dir, which Start
// may empty and whose processes it may kill.
const workDirMarker = ".gatewall-local-cluster"

// prepareWorkDir makes dir an empty work dir. A directory that holds other
// files is refused: emptying it, and killing processes that name it, must
// only ever hit what an earlier run of the cluster left.
func prepareWorkDir(dir string) error {
	if dir == "/" || filepath.Dir(dir) == "/" {
		return fmt.Errorf("refusing work dir %s: too close to the root", dir)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading work dir: %w", err)
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, workDirMarker)); err != nil {
			return fmt.Errorf("refusing work dir %s: not empty and not the work dir of an earlier local cluster (no %s)", dir, workDirMarker)
		}
		if err := killLeftovers(dir); err != nil {
			return err
		}
		// A fresh etcd every start: pods recorded by an earlier run would
		// refer to processes and network namespaces that no longer exist.
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("clearing work dir: %w", err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating work dir: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, workDirMarker), nil, 0o600)
}
