package validation

import (
	"strings"
	"testing"
)

// TestRealms: Basic's realm refuses what auth_basic reads ("$", "off");
// JWT's, which Gatewall's Lua writes as data, only what no header can
// carry; both carry quotes and backslashes.
func TestRealms(t *testing.T) {
	for realm, want := range map[string][2]bool{ // Basic ok, JWT ok
		`Staff "only" \ area`:    {true, true},
		"off":                    {false, true},
		"cost $5":                {false, true},
		"a\r\nSet-Cookie: x=1":   {false, false},
		"tab\there":              {false, false},
		strings.Repeat("r", 257): {false, false},
	} {
		if got := Realm(realm) == nil; got != want[0] {
			t.Errorf("Basic %q: accepted %v", realm, got)
		}
		if got := BearerRealm(realm) == nil; got != want[1] {
			t.Errorf("JWT %q: accepted %v", realm, got)
		}
	}
}
