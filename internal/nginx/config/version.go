package config

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
)

// Version is the content hash of a file set: paths, modes and contents, in
// path order. Identical configurations have identical versions.
func Version(files []File) string {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatUint(uint64(f.Mode), 8)))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(f.Data))))
		h.Write([]byte{0})
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
