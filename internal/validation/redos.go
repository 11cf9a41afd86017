package validation

import (
	"errors"
	"fmt"
	"strings"
)

// NGINX matches regular expressions with PCRE2, a backtracking matcher: on
// a string that does not match, it tries every way the expression could
// match it. When parts of an expression can match the same text in several
// ways, the ways multiply: (a+)+$ on thirty a's and a b has a billion, and
// one request keeps an NGINX worker busy until PCRE2's match limit (ten
// million steps, about half a second here) ends it with an error. NGINX
// 1.22 has no directive for that limit, and lowering it in the pattern
// ((*LIMIT_MATCH=n)) also fails slow but legitimate matches, so Gatewall
// refuses the expressions whose matching can blow up, and says why:
//
//   - exponential: a repeated part can match one string in two ways, so
//     each repetition doubles the work: (a+)+, ((a|aa)*)*b, (a|a)*,
//     (\w+\s?)*, (.*,)+;
//   - polynomial of degree 3 or more: three or more repetitions in a row
//     can each take the same characters, so the work grows as the cube of
//     the input: .*a.*a.*a, (.*x){3}, \d+\d+\d+. Two are accepted (the
//     common ^/api/.*/v1/.*$ is one): on the largest request line NGINX
//     reads, PCRE2 needs tens of milliseconds at worst.
//
// An expression not anchored with ^ is tried at every offset, which counts
// as one more repetition. Repetitions that cannot take each other's
// characters are fine: (/[^/]+)+ and ^/[^/]*/[^/]*/[^/]*$ match one way.
//
// The analysis works on the expression's automaton (each item a state):
// in the product of the automaton with itself, two paths over the same
// text that meet again on a cycle mean exponential ambiguity; a cycle that
// can follow another over the same text means polynomial ambiguity, whose
// degree is the longest chain of such cycles.

// Limits of the analysis: an expression whose automaton is larger is
// refused as too complex to check (pcreDifference's size limit comes first
// for nearly all of them).
const (
	maxBacktrackStates = 20000
	maxBacktrackWork   = 4_000_000
)

// maxPolynomialDegree is the highest polynomial degree accepted.
const maxPolynomialDegree = 2

var errTooComplex = errors.New("it is too complex for Gatewall to check that it cannot backtrack for a long time; simplify it")

// automaton is an expression's Thompson automaton: a state either reads
// one byte of set and goes to next, or has epsilon moves.
type automaton struct {
	eps  [][]int
	set  []byteSet
	next []int // -1 for a state with epsilon moves
}

func (a *automaton) state() (int, error) {
	if len(a.next) >= maxBacktrackStates {
		return 0, errTooComplex
	}
	a.eps = append(a.eps, nil)
	a.set = append(a.set, byteSet{})
	a.next = append(a.next, -1)
	return len(a.next) - 1, nil
}

// build adds a node's states; it returns its entry and exit.
func (a *automaton) build(n *reNode) (in, out int, err error) {
	switch n.kind {
	case reBytes:
		if in, err = a.state(); err != nil {
			return
		}
		if out, err = a.state(); err != nil {
			return
		}
		a.set[in], a.next[in] = n.set, out
		return in, out, nil
	case reConcat:
		return a.sequence(n.subs)
	case reAlt:
		if in, err = a.state(); err != nil {
			return
		}
		if out, err = a.state(); err != nil {
			return
		}
		for _, sub := range n.subs {
			s, e, err := a.build(sub)
			if err != nil {
				return 0, 0, err
			}
			a.eps[in] = append(a.eps[in], s)
			a.eps[e] = append(a.eps[e], out)
		}
		return in, out, nil
	case reRepeat:
		return a.repeat(n)
	}
	in, err = a.state()
	return in, in, err
}

func (a *automaton) sequence(subs []*reNode) (in, out int, err error) {
	if in, err = a.state(); err != nil {
		return
	}
	out = in
	for _, sub := range subs {
		s, e, err := a.build(sub)
		if err != nil {
			return 0, 0, err
		}
		a.eps[out] = append(a.eps[out], s)
		out = e
	}
	return in, out, nil
}

// repeat builds x{min,max} as PCRE2 compiles it: min copies, then either a
// loop (unbounded) or max-min nested optional copies, x(x(x)?)?, which
// match a string one way (x?x?x? would match "x" three ways).
func (a *automaton) repeat(n *reNode) (in, out int, err error) {
	sub := n.subs[0]
	var parts []*reNode
	for range max(n.min-1, 0) {
		parts = append(parts, sub)
	}
	if n.min > 0 && n.max != -1 {
		parts = append(parts, sub)
	}
	if in, out, err = a.sequence(parts); err != nil {
		return
	}
	switch {
	case n.max == -1:
		// A loop of x: x+ when min > 0 (its last copy), x* otherwise.
		loopIn, err := a.state()
		if err != nil {
			return 0, 0, err
		}
		loopOut, err := a.state()
		if err != nil {
			return 0, 0, err
		}
		s, e, err := a.build(sub)
		if err != nil {
			return 0, 0, err
		}
		a.eps[loopIn] = append(a.eps[loopIn], s)
		if n.min == 0 {
			a.eps[loopIn] = append(a.eps[loopIn], loopOut)
		}
		a.eps[e] = append(a.eps[e], s, loopOut)
		a.eps[out] = append(a.eps[out], loopIn)
		return in, loopOut, nil
	case n.max > n.min:
		optIn, optOut, err := a.optional(sub, n.max-n.min)
		if err != nil {
			return 0, 0, err
		}
		a.eps[out] = append(a.eps[out], optIn)
		return in, optOut, nil
	}
	return in, out, nil
}

// optional builds k nested optional copies of sub.
func (a *automaton) optional(sub *reNode, k int) (in, out int, err error) {
	if in, err = a.state(); err != nil {
		return
	}
	if out, err = a.state(); err != nil {
		return
	}
	s, e, err := a.build(sub)
	if err != nil {
		return 0, 0, err
	}
	a.eps[in] = append(a.eps[in], s, out)
	if k > 1 {
		restIn, restOut, err := a.optional(sub, k-1)
		if err != nil {
			return 0, 0, err
		}
		a.eps[e] = append(a.eps[e], restIn)
		e = restOut
	}
	a.eps[e] = append(a.eps[e], out)
	return in, out, nil
}

// move is a reading state reachable over epsilon moves, and the number of
// distinct ways to reach it (counted up to 2).
type move struct{ to, ways int }

// moves are the moves from a state; onPath is scratch space, all false.
func (a *automaton) moves(from int, onPath []bool, work *int) ([]move, error) {
	var out []move
	var walk func(s int) error
	walk = func(s int) error {
		if *work++; *work > maxBacktrackWork {
			return errTooComplex
		}
		if a.next[s] >= 0 {
			for i := range out {
				if out[i].to == s {
					out[i].ways = 2
					return nil
				}
			}
			out = append(out, move{s, 1})
			return nil
		}
		onPath[s] = true
		defer func() { onPath[s] = false }()
		for _, t := range a.eps[s] {
			if !onPath[t] {
				if err := walk(t); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, walk(from)
}

// backtracking says why PCRE2 could backtrack through re for a long time
// on some input; nil when it cannot (see the comment at the top, and
// redos_bounded.go for bounded repetition).
func backtracking(re string) error {
	root, err := parseBacktracking(re)
	if err != nil {
		return err
	}
	anchored := anchored(re)
	if err := loopAmbiguity(root, anchored); err != nil {
		return err
	}
	if relaxed := relaxBounds(root); relaxed != nil {
		if err := loopAmbiguity(relaxed, anchored); err != nil {
			return fmt.Errorf("%w (a repetition of more than %d times is judged as an unbounded one)", err, maxSmallRepeat)
		}
	}
	return boundedAmbiguity(shrinkBounds(root), anchored)
}

// loopAmbiguity is the analysis of the expression's cycles: a repeated
// part that can match nothing, exponential and polynomial backtracking.
func loopAmbiguity(root *reNode, anchored bool) error {
	if repeatsNullable(root) {
		return errRepeatedEmpty
	}
	a := &automaton{}
	in, _, err := a.build(root)
	if err != nil {
		return err
	}
	if !anchored {
		// Unanchored: PCRE2 tries every offset, as if .*? came first.
		if in, err = a.anyPrefix(in); err != nil {
			return err
		}
	}
	g, err := a.readingGraph(in)
	if err != nil {
		return err
	}
	return g.ambiguity()
}

// repeatsNullable says whether an expression repeats (more than once) a
// part that can match the empty string: the text can then be split among
// the repetitions in many ways, even when their number is bounded
// ((a?){30}a{30} has a billion ways to fail).
func repeatsNullable(n *reNode) bool {
	if n.kind == reRepeat && (n.max == -1 || n.max > 1) && nullable(n.subs[0]) {
		return true
	}
	for _, sub := range n.subs {
		if repeatsNullable(sub) {
			return true
		}
	}
	return false
}

func nullable(n *reNode) bool {
	switch n.kind {
	case reBytes:
		return false
	case reConcat:
		for _, sub := range n.subs {
			if !nullable(sub) {
				return false
			}
		}
		return true
	case reAlt:
		for _, sub := range n.subs {
			if nullable(sub) {
				return true
			}
		}
		return false
	case reRepeat:
		return n.min == 0 || nullable(n.subs[0])
	}
	return true
}

// anchored says whether an expression can only match at the subject's start.
func anchored(re string) bool {
	for strings.HasPrefix(re, "(?") && !strings.Contains(re[:strings.IndexByte(re, ')')+1], ":") {
		re = re[strings.IndexByte(re, ')')+1:]
	}
	return strings.HasPrefix(re, "^") || strings.HasPrefix(re, `\A`)
}

// anyPrefix puts a loop over any byte before the state in.
func (a *automaton) anyPrefix(in int) (int, error) {
	start, err := a.state()
	if err != nil {
		return 0, err
	}
	any, err := a.state()
	if err != nil {
		return 0, err
	}
	a.set[any].add(0, 255)
	a.next[any] = start
	a.eps[start] = append(a.eps[start], any, in)
	return start, nil
}

// readingGraph is the automaton without epsilon moves: its states are the
// reading states, and follow[p] the states read after p, with the number
// of ways (up to 2) to get there.
type readingGraph struct {
	set    []byteSet
	follow [][]move
	work   int
}

func (a *automaton) readingGraph(in int) (*readingGraph, error) {
	g := &readingGraph{}
	index := make([]int, len(a.next))
	var states []int
	for s := range a.next {
		if a.next[s] >= 0 {
			index[s] = len(states)
			states = append(states, s)
			g.set = append(g.set, a.set[s])
		}
	}
	onPath := make([]bool, len(a.next))
	for _, s := range states {
		ms, err := a.moves(a.next[s], onPath, &g.work)
		if err != nil {
			return nil, err
		}
		for i := range ms {
			ms[i].to = index[ms[i].to]
		}
		g.follow = append(g.follow, ms)
	}
	return g, nil
}

// degreeError says that matching is polynomial of degree.
func degreeError(degree int) error {
	return fmt.Errorf("matching can take time growing as the power %d of the input's length: %d repetitions in a row can each take the same characters "+
		"(as in .*a.*a.*a; an expression without ^ is tried at every offset, which counts as one); "+
		"anchor it with ^, and let each repetition exclude what follows it ([^/]* rather than .*)", degree, degree)
}

var errRepeatedEmpty = errors.New("a repeated part can match nothing (as in (a?){30} or (a*)*), so matching tries every way to share the text " +
	"among the repetitions; repeat the part without its own ? or * (a{0,30}, a*)")

var errExponential = errors.New("matching can take time exponential in the input's length: a repeated part can match the same text in more than one way " +
	"(as in (a+)+, (a|aa)* or (\\w+\\s?)*); rewrite it so that each repetition matches any text one way only")
