package snapgen

import "math/rand/v2"

// Source supplies a generator's choices.
type Source interface {
	// Intn returns a choice in [0, n); n must be positive.
	Intn(n int) int
}

// width is how many bytes encode a choice in [0, n).
func width(n int) int {
	w := 0
	for m := uint64(n - 1); m > 0; m >>= 8 {
		w++
	}
	return w
}

// Bytes reads choices from fuzz input: each takes the bytes it needs, big
// endian, modulo n. Once the input is used up every choice is 0.
type Bytes struct {
	data []byte
	pos  int
}

// FromBytes returns a Source reading data.
func FromBytes(data []byte) *Bytes { return &Bytes{data: data} }

// Intn implements Source.
func (b *Bytes) Intn(n int) int {
	var v uint64
	for range width(n) {
		v <<= 8
		if b.pos < len(b.data) {
			v |= uint64(b.data[b.pos])
			b.pos++
		}
	}
	return int(v % uint64(n))
}

// Random draws choices from a seeded PCG generator.
type Random struct{ r *rand.Rand }

// FromSeed returns a Source whose choices depend only on seed.
func FromSeed(seed uint64) *Random {
	return &Random{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// Intn implements Source.
func (r *Random) Intn(n int) int { return r.r.IntN(n) }

// Draw is one recorded choice: its value among n.
type Draw struct{ N, V int }

// Recorder records the choices another Source makes, so that they can be
// replayed, shrunk, or written as fuzz input.
type Recorder struct {
	src   Source
	Draws []Draw
}

// Record returns a Source that records src's choices.
func Record(src Source) *Recorder { return &Recorder{src: src} }

// Intn implements Source.
func (r *Recorder) Intn(n int) int {
	v := r.src.Intn(n)
	r.Draws = append(r.Draws, Draw{N: n, V: v})
	return v
}

// Replay returns choices from a list of values, each taken modulo the n
// it is asked for; once the list is used up every choice is 0.
type Replay struct {
	values []int
	pos    int
}

// FromValues returns a Source replaying values.
func FromValues(values []int) *Replay { return &Replay{values: values} }

// Intn implements Source.
func (r *Replay) Intn(n int) int {
	if r.pos >= len(r.values) {
		return 0
	}
	v := r.values[r.pos]
	r.pos++
	if v < 0 {
		v = -v
	}
	return v % n
}

// Values returns the recorded choices' values.
func Values(draws []Draw) []int {
	out := make([]int, len(draws))
	for i, d := range draws {
		out[i] = d.V
	}
	return out
}

// Encode writes recorded choices as the fuzz input that Bytes decodes into
// the same choices.
func Encode(draws []Draw) []byte {
	var out []byte
	for _, d := range draws {
		w := width(d.N)
		for i := w - 1; i >= 0; i-- {
			out = append(out, byte(d.V>>(8*i)))
		}
	}
	return out
}
