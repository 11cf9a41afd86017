package config

import (
	"strconv"

	"github.com/gatewall/gatewall/internal/syntax"
)

// Gatewall sizes the hash tables NGINX builds from its configuration (see
// package syntax): for each family of tables sized by one pair of
// directives of a context (http or stream) it runs NGINX's search on the
// keys the context's files were written with (hashkeys.go) and writes the
// bucket size and maximum that make it succeed, so NGINX logs nothing
// however many routes, listeners, hostnames, maps and splits there are.

// maxHashSize bounds the sizes Gatewall asks for: above 10,000 NGINX starts
// its search near the maximum instead of its estimate when there are fewer
// than a hundredth as many keys, which Gatewall's search would not follow.
// A larger bucket is chosen instead.
const maxHashSize = 10000

// maxBucketSize is the largest bucket NGINX accepts (65,536 minus a cache line).
const maxBucketSize = 65536 - syntax.CacheLine

// hashFamily is the tables one pair of directives sizes.
type hashFamily struct {
	// name is the directives' prefix, "server_names_hash".
	name string
	// defaultBucket and defaultMax are NGINX's defaults.
	defaultBucket, defaultMax int
	tables                    []syntax.HashTable
	// shared, when set, says NGINX adds keys of its own that Gatewall
	// cannot name (its variables, about 150 in Debian's build): the search
	// runs with stand-ins for them and must succeed within half of NGINX's
	// default maximum, so that NGINX, searching up to all of it, finds a
	// size for the real ones too; the bucket grows instead.
	shared bool
}

// size returns the smallest bucket size (from NGINX's default, doubling)
// for which every table fits, and the maximum that lets NGINX find it.
// scratch holds more than maxHashSize buckets.
func (f hashFamily) size(scratch *syntax.HashScratch) (bucket, maxSize int) {
	for bucket = f.defaultBucket; ; bucket = min(bucket*2, maxBucketSize) {
		limit := maxHashSize
		if f.shared {
			limit = f.defaultMax / 2
		}
		need, ok := 0, true
		for _, t := range f.tables {
			s, fits := t.Fit(bucket, bucket-8, limit, scratch)
			if !fits {
				ok = false
				break
			}
			need = max(need, s)
		}
		if f.shared {
			need *= 2
		}
		if ok || bucket == maxBucketSize {
			// Past the largest bucket, only keys crafted to share one hash
			// value remain; NGINX then warns, but still builds the table.
			return bucket, min(maxHashSize, max(f.defaultMax, need))
		}
	}
}

// directives are the family's bucket size and maximum, where they differ
// from NGINX's defaults.
func (f hashFamily) directives(scratch *syntax.HashScratch) []Directive {
	bucket, maxSize := f.size(scratch)
	var out []Directive
	if bucket != f.defaultBucket {
		out = append(out, D(f.name+"_bucket_size", strconv.Itoa(bucket)))
	}
	if maxSize != f.defaultMax {
		out = append(out, D(f.name+"_max_size", strconv.Itoa(maxSize)))
	}
	return out
}

// familyDirectives are the sizes the families' tables need: the http
// context's or the stream context's (hashkeys.go).
func familyDirectives(families []hashFamily) []Directive {
	var out []Directive
	// One scratch table for every search, not one per family: allocating
	// and clearing them was a fifth of the time rendering a small
	// configuration took.
	scratch := syntax.NewHashScratch(maxHashSize)
	for _, f := range families {
		out = append(out, f.directives(scratch)...)
	}
	return out
}
