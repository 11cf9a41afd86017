package endpoints

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

func up(name string, eps ...string) Upstream { return Upstream{Name: name, Endpoints: eps} }

// TestDiffApplyRoundTrip: applying the diff from a to b to a gives b, for
// random sets; the diff holds only what changed.
func TestDiffApplyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	randomSet := func() Set {
		s := Set{}
		for i := 0; i < r.Intn(8); i++ {
			var eps []string
			for j := 0; j < r.Intn(4); j++ {
				eps = append(eps, fmt.Sprintf("10.0.0.%d:80", r.Intn(5)))
			}
			s[fmt.Sprintf("%032x", r.Intn(10))] = up("u", eps...)
		}
		return s
	}
	for i := 0; i < 500; i++ {
		a, b := randomSet(), randomSet()
		d := Diff(a, b, 7)
		if got := a.Apply(d); !reflect.DeepEqual(got, b) {
			t.Fatalf("a %v + diff %+v = %v, want %v", a, d, got, b)
		}
		for id, u := range d.Set {
			if have, ok := a[id]; ok && have.equal(u) {
				t.Fatalf("diff sends %s, which did not change", id)
			}
		}
		if d.Version != 7 || d.Full {
			t.Fatalf("diff %+v: want version 7, not full", d)
		}
		if full := (Set{"x": up("old")}).Apply(Snapshot(b, 8)); !reflect.DeepEqual(full, b) {
			t.Fatalf("a snapshot keeps what it does not list: %v", full)
		}
	}
}

func TestDiffOfEqualSetsIsEmpty(t *testing.T) {
	s := Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80")}
	if d := Diff(s, Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80")}, 2); !d.Empty() {
		t.Errorf("diff of equal sets %+v is not empty", d)
	}
	if (Update{Full: true}).Empty() {
		t.Error("a full update of nothing is not empty: it removes everything")
	}
}

func TestHash(t *testing.T) {
	a := Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80", "10.0.0.2:80")}
	same := Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80", "10.0.0.2:80")}
	for name, other := range map[string]Set{
		"an endpoint less":    {"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80")},
		"another port":        {"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80", "10.0.0.2:81")},
		"another upstream":    {"1123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80", "10.0.0.2:80")},
		"endpoints in a name": {"0123456789abcdef0123456789abcdef": up("a\x0010.0.0.1:80", "10.0.0.2:80")},
	} {
		if a.Hash() == other.Hash() {
			t.Errorf("%s: same hash", name)
		}
	}
	if a.Hash() != same.Hash() {
		t.Error("equal sets hash differently")
	}
}

// TestValidate: what the data plane's Lua refuses is refused here first.
func TestValidate(t *testing.T) {
	good := Update{Version: 1, Set: Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:80", "[fd00::1]:8080")}, Deleted: []string{"fedcba9876543210fedcba9876543210"}}
	if err := good.Validate(); err != nil {
		t.Fatalf("a good update: %v", err)
	}
	cases := map[string]Update{
		"an ID of 31 digits":       {Set: Set{"0123456789abcdef0123456789abcde": up("a")}},
		"an ID with upper case":    {Set: Set{"0123456789ABCDEF0123456789ABCDEF": up("a")}},
		"a deleted ID":             {Deleted: []string{"x"}},
		"a name":                   {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "backend:80")}},
		"no port":                  {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1")}},
		"port 0":                   {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "10.0.0.1:0")}},
		"an IPv6 without brackets": {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "fd00::1:80")}},
		"a zone":                   {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "[fe80::1%eth0]:80")}},
		"not canonical":            {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "010.0.0.1:80")}},
		"IPv4-mapped":              {Set: Set{"0123456789abcdef0123456789abcdef": up("a", "[::ffff:0.0.0.0]:80")}},
		"Lua text":                 {Set: Set{"0123456789abcdef0123456789abcdef": up("a", `"); os.exit() --`)}},
		"a full update deleting":   {Full: true, Deleted: []string{"0123456789abcdef0123456789abcdef"}},
	}
	for name, u := range cases {
		if err := u.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: no message", name)
		}
	}
}
