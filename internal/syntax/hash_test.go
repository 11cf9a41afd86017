package syntax

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// fitInOrder is NGINX's search as ngx_hash_init runs it: keys placed in
// their order, every number of buckets from the start to the limit.
func fitInOrder(t HashTable, bucket, usable, limit int) (int, bool) {
	if len(t) == 0 {
		return 1, true
	}
	start, ok := t.searchStart(bucket, usable)
	if !ok {
		return 0, false
	}
	for size := start; size <= limit; size++ {
		load := make([]int, size)
		fits := true
		for _, k := range t {
			b := k.Hash % uint64(size)
			if load[b] += eltSize(k.Len); load[b] > usable {
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

// TestFitIsNginxsSearch: Fit places keys in another order than NGINX, to
// give up sooner on a size that does not fit; the size it finds must be
// NGINX's, for tables of every size, named in sequence or at random.
func TestFitIsNginxsSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	scratch := NewHashScratch(4096)
	for c := 0; c < 300; c++ {
		n := rng.IntN(1500)
		names := make([]string, n)
		for i := range names {
			if c%2 == 0 {
				names[i] = fmt.Sprintf("r%d.scale%d.test", i, c)
			} else {
				b := make([]byte, 1+rng.IntN(40))
				for j := range b {
					b[j] = "abcdefghijklmnopqrstuvwxyz0123456789.-"[rng.IntN(38)]
				}
				names[i] = string(b)
			}
		}
		table := HashKeys(names)
		bucket := []int{32, 64, 128, 256}[rng.IntN(4)]
		limit := 1 + rng.IntN(4096)
		wantSize, wantOK := fitInOrder(table, bucket, bucket-8, limit)
		size, ok := table.Fit(bucket, bucket-8, limit, scratch)
		if size != wantSize || ok != wantOK {
			t.Fatalf("case %d: %d keys, bucket %d, limit %d: Fit found %d, %v; NGINX's search %d, %v", c, n, bucket, limit, size, ok, wantSize, wantOK)
		}
	}
}

func TestSpreadTakesEveryKeyOnce(t *testing.T) {
	s := NewHashScratch(1)
	for n := 0; n < 2000; n++ {
		table := make(HashTable, n)
		for i := range table {
			table[i] = HashKey{Len: i}
		}
		seen := make([]bool, n)
		keys := s.spread(table)
		if len(keys) != n {
			t.Fatalf("n=%d: %d keys", n, len(keys))
		}
		for _, k := range keys {
			if seen[k.Len] {
				t.Fatalf("n=%d: key %d taken twice", n, k.Len)
			}
			seen[k.Len] = true
		}
	}
}

// BenchmarkFit5000Names is the search for 5,000 server names named in
// sequence, as the scale harness's routes are, with the two bucket sizes
// Gatewall's search tries for them: 64 bytes, where no size fits, then 128.
func BenchmarkFit5000Names(b *testing.B) {
	names := make([]string, 5000)
	for i := range names {
		names[i] = fmt.Sprintf("r%d.scale.test", i)
	}
	table := HashKeys(names)
	scratch := NewHashScratch(10000)
	for _, bucket := range []int{64, 128} {
		b.Run(fmt.Sprintf("bucket=%d", bucket), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				table.Fit(bucket, bucket-8, 10000, scratch)
			}
		})
	}
}
