package config

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// addCert registers a TLS file and the objects it is written from. One
// file may serve several listeners or policies: the same content gives
// the same path, and its origins are all of theirs.
func (b *builder) addCert(path string, data []byte, origins ...string) {
	b.cfg.Certs[path] = data
	b.origin(path, origins...)
}

// origin records the objects a file is written from.
func (b *builder) origin(path string, origins ...string) {
	all := b.cfg.FileOrigins[path]
	for _, o := range origins {
		if !slices.Contains(all, o) {
			all = append(all, o)
		}
	}
	slices.Sort(all)
	b.cfg.FileOrigins[path] = all
}

// objectNames names objects of a kind for FileOrigins.
func objectNames(kind string, keys []types.NamespacedName) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, kind+" "+k.String())
	}
	return out
}
