package config

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"
)

func newTestBuilder() *builder {
	return &builder{cfg: &Config{Certs: map[string][]byte{}}, maps: map[string]*Map{}, splits: map[string]*Split{}, upstreams: map[string]*Upstream{}, sinks: map[int]bool{}}
}

// TestAddMapNameClash: names derive from content through a short hash; a
// name taken by other content (a crafted collision) gets a longer name
// rather than silently reusing the first map, and equal content is shared.
func TestAddMapNameClash(t *testing.T) {
	b := newTestBuilder()
	first := &Map{Source: "$http_a", Variable: "$gw_c_0123456789ab", Entries: []MapEntry{{Key: `"~^a$"`, Value: "1"}}, Default: "0"}
	if got := b.addMap(first); got != "$gw_c_0123456789ab" {
		t.Fatalf("first map named %s", got)
	}
	same := *first
	if got := b.addMap(&same); got != first.Variable {
		t.Errorf("equal content named %s, want the first map's %s", got, first.Variable)
	}
	for _, other := range []*Map{
		{Source: "$http_b", Entries: first.Entries, Default: "0"},
		{Source: "$http_a", Entries: []MapEntry{{Key: `"~^b$"`, Value: "1"}}, Default: "0"},
		{Source: "$http_a", Entries: first.Entries, Default: "1"},
		{Source: "$http_a", Entries: first.Entries, Default: "0", Hostnames: true},
	} {
		other.Variable = first.Variable
		got := b.addMap(other)
		if got == first.Variable || !strings.HasPrefix(got, first.Variable+"_") {
			t.Errorf("map %+v named %s: want a longer name than the first map's", other, got)
		}
		if b.maps[got] != other || b.maps[first.Variable] != first {
			t.Errorf("map %+v: the registered maps are not both kept", other)
		}
	}
}

func TestAddSplitNameClash(t *testing.T) {
	b := newTestBuilder()
	first := &Split{Variable: "$gw_split_0123456789ab", Buckets: []SplitBucket{{Basis: 5000, Upstream: "a"}, {Basis: 5000, Upstream: "b"}}}
	b.addSplit(first)
	if got := b.addSplit(&Split{Variable: first.Variable, Buckets: first.Buckets}); got != first.Variable {
		t.Errorf("equal buckets named %s, want %s", got, first.Variable)
	}
	other := &Split{Variable: first.Variable, Buckets: []SplitBucket{{Basis: 5000, Upstream: "attacker"}, {Basis: 5000, Upstream: "b"}}}
	if got := b.addSplit(other); got == first.Variable || b.splits[got] != other || b.splits[first.Variable] != first {
		t.Errorf("other buckets named %s: want a longer name, both splits kept", got)
	}
}

// TestLocationIDClash: a location whose short id another location of the
// server took gets other internal locations, not a duplicate of theirs.
func TestLocationIDClash(t *testing.T) {
	b := newTestBuilder()
	srv := &Server{Port: 80, Name: "a.example.com"}
	k := locKey{"=", "/a"}
	taken := InternalPrefix + id("80", srv.Name, k.modifier, k.path) + "/0"
	extra := map[string]*Location{taken: {Modifier: "=", Path: taken, Internal: true}}
	route := &graph.Route{Kind: graph.KindHTTPRoute}
	rule := &graph.Rule{Valid: true}
	match := graph.Match{Path: graph.PathMatch{Type: graph.PathExact, Value: "/a"}, Method: "GET"}
	b.location(srv, k, []entry{{route: route, rule: rule, match: match}}, extra)
	if extra[taken].Directives != nil {
		t.Errorf("the other location's internal location %s was replaced", taken)
	}
	if len(extra) != 3 { // the other's, this location's candidate, and its 404
		t.Errorf("want 3 internal locations, got %d", len(extra))
	}
}

// TestUpstreamIDCollision: two upstreams whose names give the same ID get
// different IDs, the first (by name) its own; static upstreams get none.
func TestUpstreamIDCollision(t *testing.T) {
	ups := []*Upstream{
		{Name: "a_svc_80", Fallback: "f"}, {Name: "b_svc_80", Fallback: "f"}, {Name: "tls_c_svc_80", Servers: []string{"10.0.0.1:80"}},
	}
	collide := func(name string) string {
		if strings.HasPrefix(name, "a_") || strings.HasPrefix(name, "b_") && !strings.Contains(name, "\x00") {
			return "0000000000000001"
		}
		return UpstreamID(name)
	}
	assignIDs(ups, collide)
	if ups[0].ID != "0000000000000001" || ups[1].ID == ups[0].ID || ups[1].ID != UpstreamID("b_svc_80\x001") {
		t.Errorf("IDs %q %q: want the first its own, the second another", ups[0].ID, ups[1].ID)
	}
	if ups[2].ID != "" {
		t.Errorf("a static upstream got the ID %q", ups[2].ID)
	}
}

func TestLuaMethod(t *testing.T) {
	for want, words := range map[string][]string{
		"round_robin": nil, "least_conn": {"least_conn"}, "ip_hash": {"ip_hash"}, "hash": {"hash", "$request_uri"},
		"hash_consistent": {"hash", "$request_uri", "consistent"}, "random": {"random"},
		"random_two": {"random", "two"}, "random_two ": {"random", "two", "least_conn"},
	} {
		if got := luaMethod(words); got != strings.TrimSpace(want) {
			t.Errorf("%v: %s, want %s", words, got, want)
		}
	}
}
