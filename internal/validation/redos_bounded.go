package validation

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Bounded repetition hides ambiguity from the analysis of redos.go, which
// looks for cycles: x{1,200} is 200 copies of x in a row, with no cycle,
// and a part that matches one text in several ways multiplies its ways
// from copy to copy. (a|aa){1,200}$ has more than 10^41 ways to fail on
// 200 a's and a b, and PCRE2 tries each until its match limit ends the
// request with an error, half a second of CPU later; .{0,1000}a.{0,1000}b
// tried at every offset of 8 KB is a billion steps. Their number is fixed
// by the expression, not by the input's length, but it can be anything.
// So backtracking checks bounded repetitions twice:
//
//   - a repetition of more than maxSmallRepeat times is judged as the
//     unbounded one it could as well be (x{2,100} as x{2,}), by the
//     analysis of cycles (relaxBounds): the same rules then hold for
//     (a|aa){1,200} as for (a|aa)+, and for a{1,1000}a{1,1000}a{1,1000}
//     as for a+a+a+. What the unbounded expression does, the bounded one
//     does at most;
//   - what remains, small repetitions and alternations written out,
//     ((a|a){8}){8} or (a|a)(a|a)..., is counted (boundedAmbiguity): the
//     expression's automaton, each repetition judged above cut to one
//     turn more than its minimum (shrinkBounds), is read one byte class
//     at a time, keeping for every state the number of distinct ways to
//     be there. The most ways alive at once, over every text, is what
//     PCRE2 backtracks through when the text fails.

// maxSmallRepeat is the most times a repetition is counted out rather
// than judged as unbounded.
const maxSmallRepeat = 8

// Bounds of the ways counted. An anchored expression is tried once: on
// NGINX 1.22's PCRE2 here, 2^20 ways took 0.13 to 0.4 s of CPU for one
// request ((a|a){20}, (a{1,8}){1,8}), 2^16 under 25 ms. An unanchored
// expression is tried at every offset of a value NGINX reads (8 KB at
// most), so its ways are bounded 8,192 times lower: 8, which a repetition
// of a plain part does not reach (\d{1,3}\d{1,3} has at most 3).
const (
	maxBoundedWays           = 1 << 16
	maxBoundedWaysUnanchored = 1 << 3
)

// relaxBounds is n with each repetition of more than maxSmallRepeat times
// made unbounded (x{m,n} made x* or x+); nil when n has none.
func relaxBounds(n *reNode) *reNode {
	relaxed := false
	out := mapRepeats(n, func(r *reNode) {
		if r.max > maxSmallRepeat {
			r.min, r.max = min(r.min, 1), -1
			relaxed = true
		}
	})
	if !relaxed {
		return nil
	}
	return out
}

// shrinkBounds is n with each unbounded repetition, and each of more than
// maxSmallRepeat times, cut to one turn more than its minimum (at most
// maxSmallRepeat): the analysis of cycles has judged them.
func shrinkBounds(n *reNode) *reNode {
	return mapRepeats(n, func(r *reNode) {
		if r.max == -1 || r.max > maxSmallRepeat {
			r.min = min(r.min, maxSmallRepeat)
			r.max = r.min + 1
		}
	})
}

// mapRepeats is a copy of n with f applied to each repetition.
func mapRepeats(n *reNode, f func(*reNode)) *reNode {
	out := *n
	out.subs = make([]*reNode, len(n.subs))
	for i, sub := range n.subs {
		out.subs[i] = mapRepeats(sub, f)
	}
	if out.kind == reRepeat {
		f(&out)
	}
	return &out
}

// boundedAmbiguity says why PCRE2 could try too many ways to match one
// text through root, which has no unbounded repetition; nil when it cannot.
func boundedAmbiguity(root *reNode, anchored bool) error {
	limit := uint64(maxBoundedWays)
	if !anchored {
		limit = maxBoundedWaysUnanchored
	}
	a := &automaton{}
	in, _, err := a.build(root)
	if err != nil {
		return err
	}
	if pathsBound(a, in) <= limit {
		return nil // fewer paths in all than the limit: no need to read
	}
	w := &waysWalk{a: a, closures: make([][]weight, len(a.next)), acc: make([]uint64, len(a.next))}
	classes := w.byteClasses()
	start, err := w.closure(in)
	if err != nil {
		return err
	}
	seen := map[string]bool{waysKey(start): true}
	queue := [][]weight{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, c := range classes {
			next, total, err := w.step(cur, c)
			if err != nil {
				return err
			}
			if total > limit {
				return boundedError(total, limit, anchored)
			}
			if len(next) == 0 {
				continue
			}
			if k := waysKey(next); !seen[k] {
				seen[k] = true
				queue = append(queue, next)
			}
		}
	}
	return nil
}

// pathsBound bounds the ways to read any text from state in: the number
// of paths from in to a reading state, whatever they read, summed over
// the reading states.
func pathsBound(a *automaton, in int) uint64 {
	memo := make([]uint64, len(a.next))
	known := make([]bool, len(a.next))
	var paths func(s int) uint64
	paths = func(s int) uint64 {
		if known[s] {
			return memo[s]
		}
		var n uint64
		if a.next[s] >= 0 {
			n = addWays(1, paths(a.next[s]))
		} else {
			for _, t := range a.eps[s] {
				n = addWays(n, paths(t))
			}
		}
		memo[s], known[s] = n, true
		return n
	}
	return paths(in)
}

func boundedError(ways, limit uint64, anchored bool) error {
	n := strconv.FormatUint(ways, 10)
	if ways == math.MaxUint64 {
		n = "more than 10^19"
	}
	where := "an anchored expression"
	if !anchored {
		where = "an expression without ^, which is tried at every offset,"
	}
	return fmt.Errorf("matching can try %s ways or more to read one text, and %s may try %d at most: a repeated part can match the same text in more than one way "+
		"(as in (a|a){8}), and its repetitions multiply the ways; rewrite it so that each repetition matches any text one way only",
		n, where, limit)
}

// weight is a reading state and the number of ways to be in it
// (saturating at math.MaxUint64).
type weight struct {
	state int
	ways  uint64
}

// waysWalk reads an automaton without cycles, counting ways.
type waysWalk struct {
	a *automaton
	// closures are the reading states each state reaches over epsilon
	// moves, with the number of epsilon paths to each (nil: not yet known).
	closures [][]weight
	// acc and touched are scratch space for sums by state.
	acc     []uint64
	touched []int
	work    int
}

func (w *waysWalk) charge(n int) error {
	if w.work += n; w.work > maxBacktrackWork {
		return errTooComplex
	}
	return nil
}

// add adds ways to state s's sum.
func (w *waysWalk) add(s int, ways uint64) {
	if w.acc[s] == 0 {
		w.touched = append(w.touched, s)
	}
	w.acc[s] = addWays(w.acc[s], ways)
}

// sums returns the sums by state, sorted, and clears them.
func (w *waysWalk) sums() []weight {
	out := make([]weight, 0, len(w.touched))
	for _, s := range w.touched {
		out = append(out, weight{s, w.acc[s]})
		w.acc[s] = 0
	}
	w.touched = w.touched[:0]
	sort.Slice(out, func(i, j int) bool { return out[i].state < out[j].state })
	return out
}

// closure is the reading states s reaches over epsilon moves (s itself if
// it reads), with the number of ways to reach each.
func (w *waysWalk) closure(s int) ([]weight, error) {
	if c := w.closures[s]; c != nil {
		return c, nil
	}
	if w.a.next[s] >= 0 {
		c := []weight{{s, 1}}
		w.closures[s] = c
		return c, nil
	}
	var subs [][]weight
	for _, t := range w.a.eps[s] {
		c, err := w.closure(t)
		if err != nil {
			return nil, err
		}
		if err := w.charge(len(c)); err != nil {
			return nil, err
		}
		subs = append(subs, c)
	}
	for _, c := range subs {
		for _, x := range c {
			w.add(x.state, x.ways)
		}
	}
	c := w.sums()
	w.closures[s] = c
	return c, nil
}

// step reads one byte of class c (a byte standing for its class) from the
// states of cur: the states then, with their ways, and the ways in all.
func (w *waysWalk) step(cur []weight, c byte) ([]weight, uint64, error) {
	var read []weight
	for _, x := range cur {
		if set := &w.a.set[x.state]; set[c/64]&(1<<(c%64)) != 0 {
			read = append(read, x)
		}
	}
	if len(read) == 0 {
		return nil, 0, nil
	}
	var nexts [][]weight
	for _, x := range read {
		next, err := w.closure(w.a.next[x.state])
		if err != nil {
			return nil, 0, err
		}
		if err := w.charge(len(next)); err != nil {
			return nil, 0, err
		}
		nexts = append(nexts, next)
	}
	var total uint64
	for i, x := range read {
		for _, y := range nexts[i] {
			ways := mulWays(x.ways, y.ways)
			w.add(y.state, ways)
			total = addWays(total, ways)
		}
	}
	return w.sums(), total, nil
}

// byteClasses are a byte of each class of bytes every reading state reads
// alike: the classes of all bytes, refined by each distinct set read.
func (w *waysWalk) byteClasses() []byte {
	var class [256]int // each byte's class
	classes := 1
	seen := map[byteSet]bool{}
	for s, next := range w.a.next {
		set := w.a.set[s]
		if next < 0 || seen[set] {
			continue
		}
		seen[set] = true
		// Split each class into its bytes in set and the others.
		split := make([]int, 2*classes)
		for i := range split {
			split[i] = -1
		}
		n := 0
		for c := range 256 {
			k := 2*class[c] + int(set[c/64]>>(c%64)&1)
			if split[k] < 0 {
				split[k] = n
				n++
			}
			class[c] = split[k]
		}
		classes = n
	}
	out := make([]byte, 0, classes)
	taken := make([]bool, classes)
	for c := range 256 {
		if !taken[class[c]] {
			taken[class[c]] = true
			out = append(out, byte(c))
		}
	}
	return out
}

func waysKey(ws []weight) string {
	var b strings.Builder
	for _, x := range ws {
		b.WriteString(strconv.Itoa(x.state))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(x.ways, 10))
		b.WriteByte(' ')
	}
	return b.String()
}

func addWays(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func mulWays(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}
