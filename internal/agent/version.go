package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	mpi "github.com/nginx/agent/v3/api/grpc/mpi/v1"
	"github.com/nginx/agent/v3/pkg/files"

	"github.com/gatewall/gatewall/internal/datafile"
)

// version is one immutable configuration: its files sorted by path, with the
// metadata the agent compares (hash, size, permissions) computed once.
type version struct {
	id    string
	files []*mpi.File // sorted by name; shared read-only by every overview sent
	data  map[string][]byte
	// refs counts what keeps the version's files: being the desired version of
	// its key, and every in-flight push of it.
	refs int
}

// ValidateFiles reports what SetConfig would drop: paths that are not absolute
// and clean, duplicate paths, and modes with more than permission bits.
func ValidateFiles(fs []datafile.File) error {
	var errs []error
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		if err := validateFile(f); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[f.Path] {
			errs = append(errs, fmt.Errorf("file %s: duplicate path", f.Path))
		}
		seen[f.Path] = true
	}
	return errors.Join(errs...)
}

func validateFile(f datafile.File) error {
	switch {
	case !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path || f.Path == "/":
		return fmt.Errorf("file %q: path must be absolute and clean", f.Path)
	case strings.ContainsAny(f.Path, "\x00\n"):
		return fmt.Errorf("file %q: path contains a NUL or newline", f.Path)
	case f.Mode&^os.ModePerm != 0:
		return fmt.Errorf("file %s: mode %v has more than permission bits", f.Path, f.Mode)
	}
	return nil
}

// newVersion builds the version of a file set. Invalid files are left out and
// returned as an error; of duplicate paths the last one wins.
func newVersion(fs []datafile.File) (*version, error) {
	byPath := make(map[string]datafile.File, len(fs))
	var errs []error
	for _, f := range fs {
		if err := validateFile(f); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := byPath[f.Path]; dup {
			errs = append(errs, fmt.Errorf("file %s: duplicate path, the last one is kept", f.Path))
		}
		byPath[f.Path] = f
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	v := &version{files: make([]*mpi.File, 0, len(paths)), data: make(map[string][]byte, len(paths))}
	for _, p := range paths {
		f := byPath[p]
		meta := &mpi.FileMeta{
			Name:        p,
			Hash:        files.GenerateHash(f.Data),
			Permissions: files.Permissions(f.Perm()),
			Size:        int64(len(f.Data)),
		}
		v.files = append(v.files, &mpi.File{FileMeta: meta})
		v.data[p] = f.Data
	}
	// The version of the files as given (datafile.Version, the one version
	// id): it covers path, mode and content of every file, so that a mode
	// change alone is a new version too (files.GenerateConfigVersion hashes
	// only the content hashes).
	v.id = datafile.Version(fs)
	return v, errors.Join(errs...)
}

// lookup returns the content of name if this version has it with that hash.
func (v *version) lookup(name, hash string) ([]byte, *mpi.FileMeta, bool) {
	i, found := slices.BinarySearchFunc(v.files, name, func(f *mpi.File, n string) int {
		return strings.Compare(f.GetFileMeta().GetName(), n)
	})
	if !found || v.files[i].GetFileMeta().GetHash() != hash {
		return nil, nil, false
	}
	return v.data[name], v.files[i].GetFileMeta(), true
}

// overview is the FileOverview of this version for one NGINX instance.
func (v *version) overview(instanceID, configPath string) *mpi.FileOverview {
	return &mpi.FileOverview{
		Files:         v.files,
		ConfigVersion: &mpi.ConfigVersion{InstanceId: instanceID, Version: v.id},
		ConfigPath:    configPath,
	}
}
