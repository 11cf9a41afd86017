package validation

// The ambiguity of a reading graph (redos.go): whether two ways of reading
// one text can part and meet again on a cycle (exponential), and the
// longest chain of cycles each of which can read what the next one reads
// (the polynomial degree).

// pairGraph is the product of a reading graph with itself: a node is two
// states reached by reading the same text; diagonal nodes are one state.
type pairGraph struct {
	nodes [][2]int
	index map[[2]int]int
	edges [][]int
	// double are the edges between diagonal nodes taken two ways (two
	// epsilon paths between the same states).
	double map[[2]int]bool
}

// pairs explores the pair graph from the diagonal nodes of seeds, keeping
// only the nodes keep accepts.
func (g *readingGraph) pairs(seeds []int, keep func(p, q int) bool) (*pairGraph, error) {
	pg := &pairGraph{index: map[[2]int]int{}, double: map[[2]int]bool{}}
	add := func(p [2]int) int {
		if i, ok := pg.index[p]; ok {
			return i
		}
		pg.index[p] = len(pg.nodes)
		pg.nodes = append(pg.nodes, p)
		pg.edges = append(pg.edges, nil)
		return len(pg.nodes) - 1
	}
	for _, p := range seeds {
		add([2]int{p, p})
	}
	for i := 0; i < len(pg.nodes); i++ {
		p, q := pg.nodes[i][0], pg.nodes[i][1]
		for _, mk := range g.follow[p] {
			k := mk.to
			for _, ml := range g.follow[q] {
				l := ml.to
				if g.work++; g.work > maxBacktrackWork {
					return nil, errTooComplex
				}
				if !keep(k, l) || !g.set[k].overlaps(g.set[l]) {
					continue
				}
				j := add([2]int{k, l})
				pg.edges[i] = append(pg.edges[i], j)
				if p == q && k == l && mk.ways > 1 {
					pg.double[[2]int{i, j}] = true
				}
			}
		}
	}
	return pg, nil
}

// components returns the strongly connected component of each node and
// whether each component has a cycle (Tarjan's algorithm, iterative).
func components(edges [][]int) (comp []int, cyclic []bool) {
	n := len(edges)
	comp = make([]int, n)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	var stack []int
	next := 0
	type frame struct{ v, e int }
	for root := range edges {
		if index[root] >= 0 {
			continue
		}
		calls := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			if f.e < len(edges[f.v]) {
				w := edges[f.v][f.e]
				f.e++
				switch {
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{w, 0})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			c := len(cyclic)
			size := 0
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = c
				size++
				if w == v {
					break
				}
			}
			cyclic = append(cyclic, size > 1)
		}
	}
	for v, es := range edges {
		for _, w := range es {
			if w == v {
				cyclic[comp[v]] = true
			}
		}
	}
	return comp, cyclic
}

// ambiguity says whether reading can be exponentially ambiguous, or
// polynomially of a degree above maxPolynomialDegree. Only cycles of the
// reading graph (loops) can make either: two readings that part and meet
// again stay in one loop (exponential); a loop's state p that can both
// come back to itself and reach another loop's state q over the same text
// stays in its loop while the other reading moves on (polynomial).
func (g *readingGraph) ambiguity() error {
	loops, loopCyclic := components(followEdges(g.follow))
	members := make([][]int, len(loopCyclic))
	for p, l := range loops {
		members[l] = append(members[l], p)
	}
	cycles := 0
	for _, c := range loopCyclic {
		if c {
			cycles++
		}
	}
	// The degree cannot exceed the number of loops.
	polynomial := cycles > maxPolynomialDegree
	precedes := map[[2]int]bool{}
	for l, cyclic := range loopCyclic {
		if !cyclic {
			continue
		}
		within, err := g.pairs(members[l], func(p, q int) bool { return loops[p] == l && loops[q] == l })
		if err != nil {
			return err
		}
		if within.exponential() {
			return errExponential
		}
		if !polynomial {
			continue
		}
		from, err := g.pairs(members[l], func(p, _ int) bool { return loops[p] == l })
		if err != nil {
			return err
		}
		next, err := g.followingLoops(from, members[l], loops, loopCyclic)
		if err != nil {
			return err
		}
		for _, m := range next {
			precedes[[2]int{l, m}] = true
		}
	}
	if d := longestChain(loopCyclic, precedes); d > maxPolynomialDegree {
		return degreeError(d)
	}
	return nil
}

// exponential says whether two readings can part and meet again on a
// cycle: a component with a cycle holds a diagonal node and one apart, or
// a diagonal edge taken two ways.
func (pg *pairGraph) exponential() bool {
	comp, cyclic := components(pg.edges)
	diagonal := make([]bool, len(cyclic))
	apart := make([]bool, len(cyclic))
	for i, p := range pg.nodes {
		if p[0] == p[1] {
			diagonal[comp[i]] = true
		} else {
			apart[comp[i]] = true
		}
	}
	for c := range cyclic {
		if cyclic[c] && diagonal[c] && apart[c] {
			return true
		}
	}
	for e := range pg.double {
		if comp[e[0]] == comp[e[1]] && cyclic[comp[e[0]]] {
			return true
		}
	}
	return false
}

// followingLoops are the loops whose reading can follow loop states':
// for a state p of the loop and q of another, (p,p) reaches (p,q) (some
// text leads from p back to p and from p to q) and (p,q) is on a cycle
// (some text loops both). from is the pair graph from the loop's
// diagonal, first states kept in the loop.
func (g *readingGraph) followingLoops(from *pairGraph, states, loops []int, loopCyclic []bool) ([]int, error) {
	comp, cyclic := components(from.edges)
	found := map[int]bool{}
	for _, p := range states {
		start := from.index[[2]int{p, p}]
		seen := map[int]bool{start: true}
		queue := []int{start}
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			if n := from.nodes[i]; n[0] == p && loops[n[1]] != loops[p] && loopCyclic[loops[n[1]]] && cyclic[comp[i]] {
				found[loops[n[1]]] = true
			}
			for _, j := range from.edges[i] {
				if g.work++; g.work > maxBacktrackWork {
					return nil, errTooComplex
				}
				if !seen[j] {
					seen[j] = true
					queue = append(queue, j)
				}
			}
		}
	}
	var out []int
	for l := range found {
		out = append(out, l)
	}
	return out, nil
}

// longestChain is the number of loops in the longest chain of precedes
// (acyclic: loops are components of the reading graph).
func longestChain(loopCyclic []bool, precedes map[[2]int]bool) int {
	next := map[int][]int{}
	for e := range precedes {
		next[e[0]] = append(next[e[0]], e[1])
	}
	longest := map[int]int{}
	var chain func(l int) int
	chain = func(l int) int {
		if n, ok := longest[l]; ok {
			return n
		}
		n := 1
		for _, m := range next[l] {
			n = max(n, 1+chain(m))
		}
		longest[l] = n
		return n
	}
	best := 0
	for l, c := range loopCyclic {
		if c {
			best = max(best, chain(l))
		}
	}
	return best
}

// followEdges are a reading graph's edges as adjacency lists.
func followEdges(follow [][]move) [][]int {
	edges := make([][]int, len(follow))
	for p, f := range follow {
		for _, m := range f {
			edges[p] = append(edges[p], m.to)
		}
	}
	return edges
}
