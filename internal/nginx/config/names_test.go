package config

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/graph"
)

func newTestBuilder() *builder {
	return &builder{cfg: &Config{Certs: map[string][]byte{}}, maps: map[string]*Map{}, splits: map[string]*Split{},
		upstreams: map[string]*Upstream{}, sinks: map[int]bool{}, names: newNames(), stream: newStreamBuilder()}
}

// collidingNames is a registry whose short digests all collide, as a
// crafted collision of two inputs would.
func collidingNames() *names {
	n := newNames()
	n.short = func(string) string { return "000000000000" }
	return n
}

// TestNamePrefixesAreDisjoint: no kind's prefix, and none of Gatewall's own
// names, starts another, so names of different kinds never meet, and no
// Service, namespace or route name reaches one of Gatewall's own (a
// Service "sink" with port 500 in namespace "gatewall" was the upstream
// gatewall_sink_500: "duplicate upstream").
func TestNamePrefixesAreDisjoint(t *testing.T) {
	var starts []string
	for _, k := range nameKinds {
		starts = append(starts, k.prefix)
	}
	starts = append(starts, ownNames...)
	for i, a := range starts {
		for j, b := range starts {
			if i != j && strings.HasPrefix(b, a) {
				t.Errorf("%q starts %q: names of the two can meet", a, b)
			}
		}
	}
	if got := nameOf(kindUpstream, "gatewall", "sink", "500"); strings.HasPrefix(got, "gatewall_sink_") {
		t.Errorf("Service gatewall/sink:500 has the sinks' name %s", got)
	}
}

// TestNamesOfCollidingDigests: when the short digests of different parts
// are equal (forced here; crafted in life), each still gets a name of its
// own, the same parts keep theirs, and readable names are not affected.
func TestNamesOfCollidingDigests(t *testing.T) {
	n := collidingNames()
	a := n.of(kindTLSPassSocket, "tls_ns_a_443", "")
	b := n.of(kindTLSPassSocket, "tls_ns_b_443", "")
	c := n.of(kindTLSPassSocket, "tls_ns_c_443", "")
	if a == b || b == c || a == c {
		t.Fatalf("colliding digests share names: %s %s %s", a, b, c)
	}
	if again := n.of(kindTLSPassSocket, "tls_ns_b_443", ""); again != b {
		t.Errorf("the same parts are named %s, then %s", b, again)
	}
	for _, name := range []string{a, b, c} {
		if !strings.HasPrefix(name, kindTLSPassSocket.prefix) || !strings.HasSuffix(name, kindTLSPassSocket.suffix) {
			t.Errorf("%s is not a TLS pass socket's name", name)
		}
	}
	if got := n.of(kindUpstream, "ns", "app", "80"); got != "svc_ns_app_80" {
		t.Errorf("a Service port's upstream is %s, want the readable svc_ns_app_80", got)
	}
}

// TestReadableNamesAreBounded: parts that cannot be written as they are
// (letters outside DNS names', empty parts, too long for a file name) get
// a digest, marked so that no readable name can equal it.
func TestReadableNamesAreBounded(t *testing.T) {
	long := strings.Repeat("a", 253)
	cases := []struct {
		name     string
		kind     nameKind
		parts    []string
		readable bool
	}{
		{"service port", kindUpstream, []string{"ns", "app", "80"}, true},
		{"underscore", kindUpstream, []string{"ns_app", "80"}, false},
		{"empty part", kindUpstream, []string{"", "app_80"}, false},
		{"upper case", kindUpstream, []string{"NS", "app", "80"}, false},
		{"longest secret name", kindCertFile, []string{"ns", long[:243]}, true},
		{"secret name too long for a file", kindCertFile, []string{strings.Repeat("n", 63), long}, false},
		{"digest kind", kindClientCAFile, []string{"ns"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := newNames().of(c.kind, c.parts...)
			body := strings.TrimSuffix(strings.TrimPrefix(got, c.kind.prefix), c.kind.suffix)
			if want := strings.Join(c.parts, "_"); (body == want) != c.readable {
				t.Errorf("%v named %s: readable=%v, want %v", c.parts, got, body == want, c.readable)
			}
			if c.kind.readable > 0 && !c.readable && !strings.HasPrefix(body, "_") {
				t.Errorf("digest body %s is not marked", body)
			}
			if file := got[strings.LastIndex(got, "/")+1:]; strings.HasPrefix(got, "/") && len(file) > maxFileName {
				t.Errorf("file name of %d bytes: %s", len(file), file)
			}
			if static := nameOf(c.kind, c.parts...); c.readable && static != got {
				t.Errorf("nameOf gives %s, the registry %s", static, got)
			}
		})
	}
}

// TestNamesAreInjective draws parts of every shape (DNS-like, with
// separators, empty, long) for every kind, with a registry whose digests
// collide often: two different inputs never share a name, and an input
// keeps its name.
func TestNamesAreInjective(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 2))
	alphabet := []byte("ab0.-_|:$/")
	part := func() string {
		b := make([]byte, r.IntN(6))
		if r.IntN(20) == 0 {
			b = make([]byte, 200+r.IntN(60))
		}
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	n := newNames()
	n.short = func(id string) string { return digest(id)[:1] } // 16 values: collisions everywhere
	byName := map[string]string{}
	byInput := map[string]string{}
	for range 20000 {
		k := nameKinds[r.IntN(len(nameKinds))]
		parts := make([]string, 1+r.IntN(3))
		for i := range parts {
			parts[i] = part()
		}
		input := identity(k, parts)
		name := n.of(k, parts...)
		if other, ok := byName[name]; ok && other != input {
			t.Fatalf("%q and %q share the name %q", other, input, name)
		}
		if had, ok := byInput[input]; ok && had != name {
			t.Fatalf("%q was named %q, then %q", input, had, name)
		}
		byName[name], byInput[input] = input, name
	}
}

// FuzzNameOf: nameOf, outside a registry, never gives two inputs of a kind
// one name (readable names are injective, the others a whole digest).
func FuzzNameOf(f *testing.F) {
	f.Add("gatewall", "sink", "500", "gatewall_sink", "500", "")
	f.Add("ns", "a", "80", "ns_a", "80", "")
	f.Add("a.b", "c", "", "a", "b.c", "")
	f.Fuzz(func(t *testing.T, a1, a2, a3, b1, b2, b3 string) {
		a, b := []string{a1, a2, a3}, []string{b1, b2, b3}
		if fmt.Sprint(a) == fmt.Sprint(b) && identity(kindUpstream, a) == identity(kindUpstream, b) {
			return
		}
		if na, nb := nameOf(kindUpstream, a...), nameOf(kindUpstream, b...); na == nb {
			t.Fatalf("%q and %q are both %s", a, b, na)
		}
	})
}

// TestAddMapOfCollidingDigests: maps of different content whose digests
// collide keep their own variables (a location must never read another's
// map), and equal content shares one map.
func TestAddMapOfCollidingDigests(t *testing.T) {
	b := newTestBuilder()
	b.names = collidingNames()
	first := &Map{Source: "$http_a", Entries: []MapEntry{{Key: `"~^a$"`, Value: "1"}}, Default: "0"}
	v := b.addMap(kindConditionVar, first)
	same := *first
	if got := b.addMap(kindConditionVar, &same); got != v {
		t.Errorf("equal content named %s, want the first map's %s", got, v)
	}
	seen := map[string]bool{v: true}
	for _, other := range []*Map{
		{Source: "$http_b", Entries: first.Entries, Default: "0"},
		{Source: "$http_a", Entries: []MapEntry{{Key: `"~^b$"`, Value: "1"}}, Default: "0"},
		{Source: "$http_a", Entries: first.Entries, Default: "1"},
		{Source: "$http_a", Entries: first.Entries, Default: "0", Hostnames: true},
	} {
		got := b.addMap(kindConditionVar, other)
		if seen[got] || b.maps[got] != other || b.maps[v] != first {
			t.Errorf("map %+v named %s: want a name of its own, both maps kept", other, got)
		}
		seen[got] = true
	}
	s1 := &Split{Buckets: []SplitBucket{{Basis: 5000, Upstream: "a"}, {Basis: 5000, Upstream: "b"}}}
	s2 := &Split{Buckets: []SplitBucket{{Basis: 5000, Upstream: "attacker"}, {Basis: 5000, Upstream: "b"}}}
	if v1, v2 := b.addSplit(kindSplitVar, s1), b.addSplit(kindSplitVar, s2); v1 == v2 || b.splits[v1] != s1 || b.splits[v2] != s2 {
		t.Errorf("splits of other buckets share %s", v1)
	}
}

// TestLocationsOfCollidingDigests: two locations whose dispatch names'
// digests collide get internal locations of their own.
func TestLocationsOfCollidingDigests(t *testing.T) {
	b := newTestBuilder()
	b.names = collidingNames()
	extra := map[string]*Location{}
	route := &graph.Route{Kind: graph.KindHTTPRoute}
	rule := &graph.Rule{Valid: true}
	for _, path := range []string{"/a", "/b"} {
		srv := &Server{Port: 80, Name: "a.example.com"}
		match := graph.Match{Path: graph.PathMatch{Type: graph.PathExact, Value: path}, Method: "GET"}
		b.location(srv, locKey{"=", path}, []entry{{route: route, rule: rule, match: match}}, extra)
	}
	if len(extra) != 3 { // each location's candidate, and one 404
		t.Errorf("want 3 internal locations, got %d: %v", len(extra), extra)
	}
}

// TestRouteIncludePathsFitFileNames: a route's include file is named by
// its kind, namespace and name; the longest names the API server allows
// (63 and 253 bytes) still make a file name the data plane can write
// (255 bytes), and two routes never share one.
func TestRouteIncludePathsFitFileNames(t *testing.T) {
	ns, long := strings.Repeat("n", 63), strings.Repeat("a", 253)
	paths := map[string]bool{}
	for _, name := range []string{long, long[:252] + "b", "app", "app.v2"} {
		for _, kind := range []string{graph.KindHTTPRoute, graph.KindGRPCRoute} {
			p := RouteIncludePath("rate-limit", graph.ObjectRef{Kind: kind, Key: types.NamespacedName{Namespace: ns, Name: name}})
			if file := p[strings.LastIndex(p, "/")+1:]; len(file) > maxFileName || !strings.HasPrefix(p, IncludesDir+"rate-limit/") {
				t.Errorf("%s %s: %s (%d bytes)", kind, name[:min(len(name), 8)], p, len(file))
			}
			if paths[p] {
				t.Errorf("%s is two routes' file", p)
			}
			paths[p] = true
		}
	}
}
