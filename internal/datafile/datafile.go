// Package datafile is the one type for a file of a data plane's
// configuration, shared by the renderer (nginx/config), the data-plane
// adapter and the agent server, and its content version.
package datafile

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"sort"
	"strconv"
)

// File is one file of a data plane's configuration.
type File struct {
	// Path is the absolute, clean path on the data plane, e.g.
	// /etc/nginx/nginx.conf, /etc/nginx/secrets/x.pem or
	// /etc/app_protect/bundles/<sha256>.tgz. The agent server accepts only
	// paths inside the agent's allowed directories.
	Path string
	Data []byte
	// Mode holds the permission bits: 0o644, or 0o600 for private keys.
	// Zero means 0o644 (Perm). Execute bits are dropped by the agent.
	Mode os.FileMode
}

// DefaultMode is the mode of a file whose Mode is zero.
const DefaultMode os.FileMode = 0o644

// Perm is the file's mode, DefaultMode when Mode is zero.
func (f File) Perm() os.FileMode {
	if f.Mode == 0 {
		return DefaultMode
	}
	return f.Mode
}

// Version is the content hash of a file set: paths, modes (Perm) and
// contents, in path order. Identical configurations have identical
// versions. It is the one version id of a configuration: the renderer's,
// the data-plane adapter's and the agent server's (what agents are told
// they run).
func Version(files []File) string {
	sorted := append([]File(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatUint(uint64(f.Perm()), 8)))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(f.Data))))
		h.Write([]byte{0})
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
