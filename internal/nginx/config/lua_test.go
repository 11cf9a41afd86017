package config

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestUpstreamIDIsTheUpstreamsIdentity: an upstream's ID is its identity's
// (the Service port and protocol), not its name's: the names registry's
// digest fallback gives a name to one upstream in one configuration and
// to another in the next (a collision of short digests decides which
// upstream keeps the short name), but the IDs never follow it.
func TestUpstreamIDIsTheUpstreamsIdentity(t *testing.T) {
	// Parts that are not readable get digest names; a weak short digest
	// makes every such pair collide.
	a := []string{"ns", "App", "80"}
	b := []string{"ns", "Bpp", "80"}
	weak := func() *names {
		n := newNames()
		n.short = func(string) string { return "000000000000" }
		return n
	}
	register := func(n *names, parts ...[]string) map[string]*Upstream {
		out := map[string]*Upstream{}
		var ups []*Upstream
		for _, p := range parts {
			u := &Upstream{Name: n.of(kindUpstream, p...), identity: identity(kindUpstream, p), Fallback: "f"}
			ups = append(ups, u)
			out[p[1]] = u
		}
		if msg := assignIDs(ups, upstreamID); msg != "" {
			t.Fatal(msg)
		}
		return out
	}
	both := register(weak(), a, b) // App has the short name, Bpp the long one
	alone := register(weak(), b)   // Bpp has the short name App had
	if both["App"].Name != alone["Bpp"].Name {
		t.Fatalf("the registry did not give Bpp App's name (%s, %s): the test needs a collision", both["App"].Name, alone["Bpp"].Name)
	}
	if both["App"].ID == alone["Bpp"].ID {
		t.Errorf("App in one configuration and Bpp in the next have the same ID %s, as they have the same name", alone["Bpp"].ID)
	}
	if both["Bpp"].ID != alone["Bpp"].ID {
		t.Errorf("Bpp's ID is %s with App and %s alone", both["Bpp"].ID, alone["Bpp"].ID)
	}
	if len(both["App"].ID) != 32 || strings.Trim(both["App"].ID, "0123456789abcdef") != "" {
		t.Errorf("ID %q: want 32 hex digits (128 bits)", both["App"].ID)
	}
	if got := UpstreamID(types.NamespacedName{Namespace: "ns", Name: "App"}, 80); got != both["App"].ID {
		t.Errorf("UpstreamID %s, want the configuration's %s", got, both["App"].ID)
	}
}

// TestUpstreamIDCollision: two upstreams whose identities give the same ID
// leave the configuration without IDs, and say so (no fallback: another
// ID would depend on the configuration's other upstreams); static
// upstreams get none.
func TestUpstreamIDCollision(t *testing.T) {
	ups := []*Upstream{
		{Name: "a_svc_80", identity: "a", Fallback: "f"}, {Name: "b_svc_80", identity: "b", Fallback: "f"},
		{Name: "tls_c_svc_80", Servers: []string{"10.0.0.1:80"}},
	}
	if msg := assignIDs(ups, upstreamID); msg != "" || ups[0].ID == ups[1].ID || ups[2].ID != "" {
		t.Fatalf("IDs %q %q %q (%s): want two of their own, none for the static upstream", ups[0].ID, ups[1].ID, ups[2].ID, msg)
	}
	collide := func(string) string { return "00000000000000000000000000000001" }
	msg := assignIDs(ups, collide)
	if !strings.Contains(msg, "a_svc_80 and b_svc_80") {
		t.Errorf("a collision says %q, want the upstreams named", msg)
	}
	for _, u := range ups {
		if u.ID != "" {
			t.Errorf("after a collision %s has the ID %s", u.Name, u.ID)
		}
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
