package apis

import (
	"testing"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/api/plm"
)

// TestPLMGroupSettles: PLM's CRDs of both groups installed while the
// manager runs become served one after the other; a look that finds only
// waf.f5.com's must not take that group for good when appprotect.f5.com's
// (preferred) follows. A group found at start, or forced, is taken at once.
func TestPLMGroupSettles(t *testing.T) {
	for _, c := range []struct {
		name   string
		forced bool
		late   bool
		looks  []string // the PLM group each look finds served ("" none)
		want   []string // PLMGroup after each look
	}{
		{"at start, waf.f5.com alone", false, false, []string{plm.GroupWAF}, []string{plm.GroupWAF}},
		{"late, appprotect.f5.com", false, true, []string{plm.GroupAppProtect}, []string{plm.GroupAppProtect}},
		{"late, waf.f5.com then both", false, true, []string{plm.GroupWAF, plm.GroupAppProtect}, []string{"", plm.GroupAppProtect}},
		{"late, waf.f5.com alone twice", false, true, []string{plm.GroupWAF, plm.GroupWAF}, []string{"", plm.GroupWAF}},
		{"late, waf.f5.com forced", true, true, []string{plm.GroupWAF}, []string{plm.GroupWAF}},
		{"late, nothing, then waf.f5.com twice", false, true, []string{"", plm.GroupWAF, plm.GroupWAF}, []string{"", "", plm.GroupWAF}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var look int
			d := &apiDiscovery{apis: New(logr.Discard(), nil), plmForced: c.forced, served: func(api API) (string, bool) {
				if api != PLM {
					return "", false
				}
				g := c.looks[look]
				return g, g != ""
			}}
			for look = range c.looks {
				if err := d.discover(c.late); err != nil {
					t.Fatal(err)
				}
				if got := d.apis.PLMGroup(); got != c.want[look] {
					t.Fatalf("after look %d: PLM group %q, want %q", look, got, c.want[look])
				}
			}
		})
	}
}
