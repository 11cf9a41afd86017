package config

import (
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/syntax"
)

// Request header modifiers on backendRefs apply to the requests each backend
// receives, after the rule's. With one backend they fold into the rule's
// modifier. With several, the request's backend is drawn once, as an index
// (split_clients on $request_id), and maps of that index give both the
// upstream and each modified header's value, so a request's headers always
// match the backend it goes to.

// headerOp is what a modifier does to one header.
type headerOp struct {
	kind  string // "set", "add" or "remove"
	value string
}

// opsOf lists a modifier's operations by lower-case header name, with the
// names in first-seen order.
func opsOf(m *graph.HeaderModifier) (map[string]headerOp, []string, map[string]string) {
	ops, names, spelled := map[string]headerOp{}, []string(nil), map[string]string{}
	if m == nil {
		return ops, names, spelled
	}
	put := func(name string, op headerOp) {
		k := strings.ToLower(name)
		if _, ok := ops[k]; !ok {
			names = append(names, k)
			spelled[k] = name
		}
		ops[k] = op
	}
	for _, h := range m.Set {
		put(h.Name, headerOp{"set", h.Value})
	}
	for _, h := range m.Add {
		put(h.Name, headerOp{"add", h.Value})
	}
	for _, n := range m.Remove {
		put(n, headerOp{kind: "remove"})
	}
	return ops, names, spelled
}

// composeHeaders applies the backend's modifier after the rule's.
func composeHeaders(rule, backend *graph.HeaderModifier) *graph.HeaderModifier {
	if backend == nil {
		return rule
	}
	ops, names, spelled := opsOf(rule)
	bops, bnames, bspelled := opsOf(backend)
	for _, k := range bnames {
		b, r := bops[k], ops[k]
		if _, ok := ops[k]; !ok {
			names = append(names, k)
			spelled[k] = bspelled[k]
		}
		switch {
		case b.kind != "add":
			ops[k] = b
		case r.kind == "set":
			ops[k] = headerOp{"set", r.value + "," + b.value}
		case r.kind == "add":
			ops[k] = headerOp{"add", r.value + "," + b.value}
		case r.kind == "remove":
			ops[k] = headerOp{"set", b.value}
		default:
			ops[k] = b
		}
	}
	out := &graph.HeaderModifier{}
	for _, k := range names {
		op := ops[k]
		switch op.kind {
		case "set":
			out.Set = append(out.Set, graph.Header{Name: spelled[k], Value: op.value})
		case "add":
			out.Add = append(out.Add, graph.Header{Name: spelled[k], Value: op.value})
		case "remove":
			out.Remove = append(out.Remove, spelled[k])
		}
	}
	return out
}

// hasBackendHeaders says whether some backend of a rule modifies request headers.
func hasBackendHeaders(backends []*graph.Backend) bool {
	for _, b := range backends {
		if b.RequestHeaders != nil {
			return true
		}
	}
	return false
}

// headerValue is the value expression NGINX sends for an operation on a
// header; "" for no operation.
func (b *builder) headerValue(name string, op headerOp) string {
	switch op.kind {
	case "set":
		return quoteHeaderValue(op.value)
	case "add":
		return b.addHeaderVar(name, op.value)
	case "remove":
		return `""`
	}
	return ""
}

// untouchedValue is what NGINX sends for a header a backend's modifier
// leaves alone: Gatewall's default for the headers it sets, else the
// client's value.
func untouchedValue(name string, defaults []Directive) string {
	for _, dir := range defaults {
		if strings.EqualFold(dir.Args[0], name) {
			return dir.Args[1]
		}
	}
	return syntax.HeaderVariable(name)
}

// addHeaderVar is a variable holding the request's value of a header with
// value appended, comma-separated.
func (b *builder) addHeaderVar(name, value string) string {
	return b.addMap(kindAddHeaderVar, &Map{
		Source:  syntax.HeaderVariable(name),
		Entries: []MapEntry{{Key: `""`, Value: quoteHeaderValue(value)}},
		Default: Quote(syntax.AppendedHeaderValue(name, value)),
	})
}

// perBackendHeaders renders a rule whose backends modify headers
// differently: it returns the header directives (set_header prefix) and the
// proxy target, a variable naming the drawn backend's upstream. defaults are
// the headers Gatewall sets, which backends that leave them alone get.
func (b *builder) perBackendHeaders(set string, defaults []Directive, rule *graph.Rule, h2c bool) ([]Directive, string) {
	backends := rule.Backends
	var total int64
	for _, be := range backends {
		total += int64(be.Weight)
	}
	index := &Split{}
	upstreams := &Map{Default: `""`}
	given := 0
	for i, be := range backends {
		up := b.backendUpstream(be, h2c)
		basis := int(int64(be.Weight) * 10000 / total)
		if i == len(backends)-1 {
			basis = 10000 - given
		}
		given += basis
		index.Buckets = append(index.Buckets, SplitBucket{Basis: basis, Upstream: strconv.Itoa(i)})
		upstreams.Entries = append(upstreams.Entries, MapEntry{Key: strconv.Itoa(i), Value: up})
	}
	effective := make([]map[string]headerOp, len(backends))
	var names []string
	spelled := map[string]string{}
	seen := map[string]bool{}
	for i, be := range backends {
		m := composeHeaders(rule.Filters.RequestHeaders, be.RequestHeaders)
		ops, ns, sp := opsOf(m)
		effective[i] = ops
		for _, n := range ns {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
				spelled[n] = sp[n]
			}
		}
	}
	// Rules with the same weights share the index: a request draws once,
	// and the maps keyed by it are named by their own content.
	upstreams.Source = b.addSplit(kindBackendIdxVar, index)
	target := b.addMap(kindBackendUpVar, upstreams)
	var ds []Directive
	for _, n := range names {
		m := &Map{Source: index.Variable, Default: `""`}
		for i := range backends {
			value := untouchedValue(spelled[n], defaults)
			if op, ok := effective[i][n]; ok {
				value = b.headerValue(spelled[n], op)
			}
			m.Entries = append(m.Entries, MapEntry{Key: strconv.Itoa(i), Value: value})
		}
		ds = append(ds, D(set, spelled[n], b.addMap(kindBackendHdrVar, m)))
	}
	return ds, target
}
