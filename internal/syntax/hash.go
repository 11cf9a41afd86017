package syntax

import (
	"fmt"
	"sort"
	"strings"
)

// NGINX keeps server names, map keys, variable names and the proxied
// header names of each location in hash tables it builds when it reads
// the configuration (ngx_hash_init). For each table it tries every number
// of buckets from an estimate up to a maximum and takes the first where no
// bucket holds more than the bucket size in bytes of keys. A key longer
// than a bucket fails `nginx -t` ("could not build server_names_hash, you
// should increase server_names_hash_bucket_size"); no fitting size logs a
// warning on every test and reload ("could not build optimal
// variables_hash") and builds a slower table. HashTable runs the same
// search on the keys Gatewall renders, with NGINX's hash function.

// CacheLine is the unit NGINX rounds bucket sizes up to (x86-64, arm64).
const CacheLine = 64

// HashKey is a key as NGINX hashes it: its length and ngx_hash_key_lc.
type HashKey struct {
	Len  int
	Hash uint64
}

// NewHashKey hashes s as NGINX does.
func NewHashKey(s string) HashKey {
	var h uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = h*31 + uint64(c)
	}
	return HashKey{Len: len(s), Hash: h}
}

// eltSize is the bytes a key takes in a bucket (NGX_HASH_ELT_SIZE): a value
// pointer, then the name with a two-byte length, aligned to a pointer.
func eltSize(n int) int { return 8 + (n+2+7)/8*8 }

// HashTable is the keys of one table NGINX builds.
type HashTable []HashKey

// HashKeys hashes names.
func HashKeys(names []string) HashTable {
	t := make(HashTable, 0, len(names))
	for _, n := range names {
		t = append(t, NewHashKey(n))
	}
	return t
}

// HashScratch is scratch space for Fit: the load of each bucket, valid
// where its stamp is the current search's, so that trying one more number
// of buckets costs the keys placed, not clearing every bucket again.
type HashScratch struct {
	buckets []scratchBucket
	gen     uint32
	// keys is the table searched, in the order keys are placed.
	keys HashTable
}

// scratchBucket is a bucket's load and stamp side by side: the search
// reads both at once, in buckets all over the table.
type scratchBucket struct {
	stamp uint32
	load  int32
}

// NewHashScratch is scratch space for tables of at most limit buckets.
func NewHashScratch(limit int) *HashScratch {
	return &HashScratch{buckets: make([]scratchBucket, limit+1)}
}

// next starts a new search for a number of buckets.
func (s *HashScratch) next() {
	s.gen++
	if s.gen == 0 { // wrapped: every stamp may look current
		clear(s.buckets)
		s.gen = 1
	}
}

// add puts n bytes in bucket b and returns its load.
func (s *HashScratch) add(b, n int) int {
	sb := &s.buckets[b]
	if sb.stamp != s.gen {
		sb.stamp, sb.load = s.gen, 0
	}
	sb.load += int32(n)
	return int(sb.load)
}

// Fit returns a number of buckets, at most limit, for which NGINX's search
// with this bucket size succeeds, where each bucket may use only usable of
// its bytes (bucket-8: all but its end marker); ok is false when there is
// none. scratch holds more than limit buckets.
func (t HashTable) Fit(bucket, usable, limit int, scratch *HashScratch) (size int, ok bool) {
	if len(t) == 0 {
		return 1, true
	}
	start, ok := t.searchStart(bucket, usable)
	if !ok {
		return 0, false
	}
	keys := scratch.spread(t)
	for size = start; size <= limit; size++ {
		scratch.next()
		fits := true
		for _, k := range keys {
			if scratch.add(int(k.Hash%uint64(size)), eltSize(k.Len)) > usable {
				fits = false
				break
			}
		}
		if fits {
			return size, true
		}
	}
	return 0, false
}

// searchStart is the first number of buckets worth trying: NGINX's first,
// or more when below total/usable some bucket must overflow; ok is false
// when a key does not fit in a bucket at all.
func (t HashTable) searchStart(bucket, usable int) (start int, ok bool) {
	total := 0
	for _, k := range t {
		if eltSize(k.Len) > usable {
			return 0, false
		}
		total += eltSize(k.Len)
	}
	return max(1, len(t)/((bucket-8)/16), (total+usable-1)/usable), true
}

// spread is t's keys in the order Fit places them: stepping through t by a
// stride coprime with its length and far from its neighbours, so that each
// key is taken once. Whether a size fits does not depend on the order keys
// are placed in, but how soon a size that does not fit overflows does:
// keys rendered in order ("r1", "r2", ...) hash to nearly evenly spaced
// values that fill buckets evenly for a long run, and a search placing them
// in that order went through about 1.5 to 3 times as many keys before it
// could give up on a size. The keys are copied in that order once, so that
// each size reads them in sequence.
func (s *HashScratch) spread(t HashTable) HashTable {
	n := len(t)
	stride := 1
	if n >= 3 {
		stride = n*618/1000 | 1
		for gcd(stride, n) != 1 {
			stride++
		}
	}
	s.keys = s.keys[:0]
	for i, j := 0, 0; i < n; i++ {
		s.keys = append(s.keys, t[j])
		if j += stride; j >= n {
			j -= n
		}
	}
	return s.keys
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Headers NGINX 1.22 puts in the tables of proxied request headers (set)
// and hidden response headers (hide) of every location, besides the
// configuration's (ngx_http_proxy_headers, ngx_http_proxy_hide_headers and
// their gRPC counterparts).
var (
	ProxySetDefaults  = []string{"Host", "Connection", "Content-Length", "Transfer-Encoding", "TE", "Keep-Alive", "Expect", "Upgrade"}
	ProxyHideDefaults = []string{"Date", "Server", "X-Pad", "X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering", "X-Accel-Charset"}
	GRPCSetDefaults   = []string{"Content-Length", "TE", "Host", "Connection", "Transfer-Encoding", "Keep-Alive", "Expect", "Upgrade"}
	GRPCHideDefaults  = []string{"Date", "Server", "X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering", "X-Accel-Charset"}
)

// HeaderTable is a table of header names: NGINX's defaults and the
// configuration's, lower-cased, without repeats, sorted.
func HeaderTable(defaults, names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range append(append([]string(nil), defaults...), names...) {
		if l := strings.ToLower(h); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// NGINX 1.22 sizes its tables of gRPC headers itself: no directive changes
// them (unlike proxy_headers_hash_*).
const (
	grpcHeadersBucket = 64
	grpcHeadersMax    = 512
)

// CheckGRPCHeaders says why NGINX could not build, or not build well, the
// tables of a location passing requests with grpc_pass that sets (or
// removes) the request headers set and hides the response headers hide.
func CheckGRPCHeaders(set, hide []string) error {
	scratch := NewHashScratch(grpcHeadersMax)
	for _, table := range []struct {
		what  string
		names []string
	}{{"request headers", HeaderTable(GRPCSetDefaults, set)}, {"response headers", HeaderTable(GRPCHideDefaults, hide)}} {
		for _, n := range table.names {
			if eltSize(len(n))+8 > grpcHeadersBucket {
				return fmt.Errorf("header name %q is %d characters long: NGINX's fixed table of gRPC %s takes names of at most %d characters", n, len(n), table.what, grpcHeadersBucket-8-8-2)
			}
		}
		if _, ok := HashKeys(table.names).Fit(grpcHeadersBucket, grpcHeadersBucket-8, grpcHeadersMax, scratch); !ok {
			return fmt.Errorf("NGINX cannot build its fixed-size table of gRPC %s for these %d header names (shorter or fewer names fit)", table.what, len(table.names))
		}
	}
	return nil
}

// CORSHiddenHeaders are the response headers a CORS filter hides from the
// backend's answer, replacing them with its own.
var CORSHiddenHeaders = []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers",
	"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age"}

// NGINX 1.22 builds the table of MIME types of gzip_types with a fixed
// bucket size and limit (ngx_http_merge_types), with text/html always
// among them.
const (
	typesBucket = 64
	typesMax    = 2048
	// MaxGzipType is the longest MIME type one of its buckets holds.
	MaxGzipType = typesBucket - 8 - 8 - 2
)

// GzipTypes are the MIME types a gzip_types directive lists for types:
// lower-cased (as NGINX keys them), without repeats and without
// text/html, which NGINX always adds (a repeat makes it warn), in order.
func GzipTypes(types []string) []string {
	seen := map[string]bool{"text/html": true}
	var out []string
	for _, t := range types {
		if l := strings.ToLower(t); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// CheckGzipTypes says why NGINX could not build its fixed-size table of
// the MIME types of gzip_types for types; nil when it can.
func CheckGzipTypes(types []string) error {
	keys := append([]string{"text/html"}, GzipTypes(types)...)
	for _, k := range keys {
		if len(k) > MaxGzipType {
			return fmt.Errorf("MIME type %q is %d characters long: NGINX's fixed table of gzip_types takes types of at most %d characters", k, len(k), MaxGzipType)
		}
	}
	if _, ok := HashKeys(keys).Fit(typesBucket, typesBucket-8, typesMax, NewHashScratch(typesMax)); !ok {
		return fmt.Errorf("NGINX cannot build its fixed-size table of gzip_types for these %d MIME types (shorter or fewer types fit)", len(keys))
	}
	return nil
}
