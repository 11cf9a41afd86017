package render_test

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
	"github.com/gatewall/gatewall/test/snapgen"
)

var (
	propertyCount = flag.Int("property.count", 50, "random snapshots TestNginxAcceptsRandomSnapshots renders and checks with nginx -t")
	propertySeed  = flag.Uint64("property.seed", 1, "seed of the first snapshot of TestNginxAcceptsRandomSnapshots; snapshot i uses seed+i")
)

// nginxBatch is how many configurations one nginx -t batch tests.
const nginxBatch = 64

// TestNginxAcceptsRandomSnapshots renders random large snapshots (every
// listener, route, match, filter and policy kind snapgen makes), checks
// each for the properties of checkProperties, and runs real `nginx -t` on
// every Gateway's configuration: whatever Gatewall renders, NGINX must
// accept. A rejected configuration is shrunk to a small snapshot that
// NGINX still rejects the same way, printed as manifests for
// `gatewall render`. The default size (50, ~8 s on a loaded machine)
// keeps `go test` short; a long run (docs/testing.md):
//
//	go test ./internal/render -run TestNginxAcceptsRandomSnapshots -property.count=10000 -property.seed=100000 -timeout 0 -v
func TestNginxAcceptsRandomSnapshots(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	type tested struct {
		seed  uint64
		files []config.File
	}
	var batch []tested
	failures := map[string]uint64{} // signature → first seed
	var order []string
	checked, rejected, snapshots := 0, 0, 0
	flush := func(i int) {
		if len(batch) == 0 {
			return
		}
		configs := make([][]config.File, len(batch))
		for i, b := range batch {
			configs[i] = b.files
		}
		results, err := nginxtest.TestBatch(configs)
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range results {
			checked++
			if r.OK {
				continue
			}
			rejected++
			sig := nginxSignature(r.Output)
			if _, seen := failures[sig]; !seen {
				failures[sig] = batch[j].seed
				order = append(order, sig)
				t.Logf("nginx -t rejects the configuration of seed %d (shrunk at the end): %s", batch[j].seed, sig)
			}
		}
		batch = batch[:0]
		// A long run can be read, or stopped, at any point.
		t.Logf("progress: %d of %d snapshots, %d with every property, %d Gateway configurations checked by nginx -t, %d rejected", i+1, *propertyCount, snapshots, checked, rejected)
	}
	for i := range *propertyCount {
		seed := *propertySeed + uint64(i)
		var res render.Result
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			res = checkProperties(t, func() *snapgen.Snapshot { return largeSnapshot(snapgen.FromSeed(seed)) })
		}) {
			continue
		}
		snapshots++
		for _, k := range sortedGateways(res) {
			batch = append(batch, tested{seed: seed, files: res.Files[k]})
		}
		if len(batch) >= nginxBatch {
			flush(i)
		}
	}
	flush(*propertyCount - 1)
	t.Logf("%d snapshots, %d with every property, %d Gateway configurations checked by nginx -t, %d rejected (%d kinds)", *propertyCount, snapshots, checked, rejected, len(failures))
	for _, sig := range order {
		seed := failures[sig]
		snap, out := shrink(t, seed, sig)
		y, err := snap.YAML()
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("nginx -t rejects the configuration of seed %d (-property.seed=%d -property.count=1): %s\nshrunk to this snapshot:\n%s\nnginx -t said:\n%s", seed, seed, sig, y, out)
	}
}

func largeSnapshot(src snapgen.Source) *snapgen.Snapshot {
	return snapgen.Generate(src, snapgen.Large, graph.DefaultControllerName)
}

var (
	emergRE    = regexp.MustCompile(`\[emerg\][^\n]*`)
	locationRE = regexp.MustCompile(` in /[^ ]*:[0-9]+`)
	quotedRE   = regexp.MustCompile(`"[^"]*"`)
	numberRE   = regexp.MustCompile(`[0-9]+`)
)

// nginxSignature is what kind of rejection NGINX's output says, without
// the file, line, names and numbers that differ between snapshots.
func nginxSignature(out string) string {
	line := emergRE.FindString(out)
	if line == "" {
		line = strings.TrimSpace(out)
	}
	line = locationRE.ReplaceAllString(line, "")
	line = quotedRE.ReplaceAllString(line, `"…"`)
	return numberRE.ReplaceAllString(line, "N")
}

// rejects renders a snapshot and says whether nginx -t rejects one of its
// Gateways' configurations with the signature, and NGINX's output.
func rejects(t *testing.T, s *snapgen.Snapshot, sig string) (bool, string) {
	res := render.Render(s.Input(), goldenTime)
	var configs [][]config.File
	for _, k := range sortedGateways(res) {
		configs = append(configs, res.Files[k])
	}
	results, err := nginxtest.TestBatch(configs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.OK && nginxSignature(r.Output) == sig {
			return true, r.Output
		}
	}
	return false, ""
}

// maxShrinkSteps bounds the nginx -t runs spent shrinking one failure.
const maxShrinkSteps = 400

// shrink finds a small snapshot that nginx -t still rejects with the same
// signature. Choice 0 is the simplest option everywhere, so it first
// keeps the shortest prefix of the seed's recorded choices that still
// fails (the rest become zeros), then zeroes large chunks of the choices
// left; then it removes the snapshot's objects, in chunks, then one at a
// time; last the elements of their lists (rules, matches, filters…).
func shrink(t *testing.T, seed uint64, sig string) (*snapgen.Snapshot, string) {
	rec := snapgen.Record(snapgen.FromSeed(seed))
	best := largeSnapshot(rec)
	values := snapgen.Values(rec.Draws)
	_, out := rejects(t, best, sig)
	steps := 0
	try := func(s *snapgen.Snapshot) bool {
		if steps >= maxShrinkSteps {
			return false
		}
		steps++
		ok, o := rejects(t, s, sig)
		if ok {
			best, out = s, o
		}
		return ok
	}
	for n := 1; n < len(values); n *= 2 {
		if try(largeSnapshot(snapgen.FromValues(values[:n]))) {
			values = values[:n]
			break
		}
	}
	for chunk := len(values) / 4; chunk >= max(1, len(values)/16); chunk /= 4 {
		for start := 0; start < len(values); start += chunk {
			candidate := append([]int(nil), values...)
			changed := false
			for i := start; i < min(start+chunk, len(values)); i++ {
				changed = changed || candidate[i] != 0
				candidate[i] = 0
			}
			if changed && try(largeSnapshot(snapgen.FromValues(candidate))) {
				values = candidate
			}
		}
	}
	for chunk := len(best.Objects) / 2; chunk >= 1; chunk /= 2 {
		for start := 0; start < len(best.Objects); {
			drop := map[client.Object]bool{}
			for _, o := range best.Objects[start:min(start+chunk, len(best.Objects))] {
				drop[o] = true
			}
			if !try(best.Without(func(o client.Object) bool { return drop[o] })) {
				start += chunk
			}
		}
	}
	for i := 0; i < best.ListItems(); {
		if c := best.WithoutListItem(i); c == nil || !try(c) {
			i++
		}
	}
	return best, out
}
