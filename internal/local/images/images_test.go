package images

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestRunOnlyBuildsWhatRunningNeeds: make run-local builds only the specs
// marked Run. They must hold every image running Gatewall locally starts
// (the manager, the data plane, the runtime's pause and CoreDNS, and
// every image config/samples names), and none that only tests start.
func TestRunOnlyBuildsWhatRunningNeeds(t *testing.T) {
	run := map[string]bool{}
	for _, s := range Specs(nil) {
		if s.Run {
			for _, tag := range s.Tags {
				run[tag] = true
			}
		}
	}
	want := []string{Manager, DataPlane, Pause, CoreDNS, Static}
	samples, err := filepath.Glob(filepath.Join("..", "..", "..", "config", "samples", "*.yaml"))
	if err != nil || len(samples) == 0 {
		t.Fatalf("config/samples: %v (%d files)", err, len(samples))
	}
	image := regexp.MustCompile(`(?m)^\s*image:\s*(\S+)\s*$`)
	for _, f := range samples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range image.FindAllStringSubmatch(string(b), -1) {
			want = append(want, m[1])
		}
	}
	for _, w := range want {
		if !run[w] {
			t.Errorf("%s is not built by images -run-only, and make run-local starts it", w)
		}
	}
	for _, testOnly := range []string{DataPlaneTest, TestBackend, WAFStandIn} {
		if run[testOnly] {
			t.Errorf("%s, which only tests start, is built by images -run-only", testOnly)
		}
	}
	// A spec is built after those it is built from: the run-only subset
	// keeps its bases.
	var order []string
	for _, s := range Specs(nil) {
		if s.Run {
			order = append(order, s.Tags[0])
		}
	}
	if !slices.Contains(order, Static) || order[0] != Static {
		t.Errorf("run-only build order %v, want the static base first", order)
	}
}
