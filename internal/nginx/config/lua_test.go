package config

import (
	"strings"
	"testing"
)

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
