package render_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"

	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/snapgen"
)

// FuzzSnapshot mutates the structure of a snapshot, not the text of
// manifests: snapgen turns the fuzzer's bytes into choices (how many
// listeners, which hostnames, routes with which matches, filters,
// backends and weights, which policies), so nearly every input is a valid
// snapshot that reaches graph building, policies and rendering. Each input
// is checked for every property of checkProperties. Seeds are in
// testdata/fuzz/FuzzSnapshot; explore with (docs/testing.md)
//
//	go test -run '^$' -fuzz '^FuzzSnapshot$' -fuzzminimizetime 50x -parallel 1 -timeout 0 ./internal/render
//
// -fuzzminimizetime bounds the minimization of each input that finds new
// coverage: by default up to a minute each, during which nothing else runs.
func FuzzSnapshot(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		checkProperties(t, func() *snapgen.Snapshot {
			return smallSnapshot(snapgen.FromBytes(data))
		})
	})
}

// corpusDir holds FuzzSnapshot's seed corpus.
const corpusDir = "testdata/fuzz/FuzzSnapshot"

// TestFuzzSeedCorpus: the seed corpus together makes every kind of
// object, match, filter and policy the generator makes in 300 snapshots,
// and each seed renders at least one Gateway; so fuzzing starts from
// inputs that reach everything. -update picks seeds again (the first
// seeds that add a kind) and rewrites the corpus.
func TestFuzzSeedCorpus(t *testing.T) {
	want := map[string]bool{}
	for seed := range uint64(300) {
		for _, f := range snapgen.Features(smallSnapshot(snapgen.FromSeed(seed))) {
			want[f] = true
		}
	}
	if *update {
		writeSeedCorpus(t, want)
	}
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range entries {
		data := readCorpusEntry(t, filepath.Join(corpusDir, e.Name()))
		s := smallSnapshot(snapgen.FromBytes(data))
		if res := render.Render(s.Input(), goldenTime); len(res.Files) == 0 {
			t.Errorf("%s renders no Gateway", e.Name())
		}
		for _, f := range snapgen.Features(s) {
			have[f] = true
		}
	}
	for f := range want {
		if !have[f] {
			t.Errorf("no seed of %s has %s (run with -update)", corpusDir, f)
		}
	}
}

func smallSnapshot(src snapgen.Source) *snapgen.Snapshot {
	return snapgen.Generate(src, snapgen.Small, graph.DefaultControllerName)
}

// writeSeedCorpus writes, as fuzz inputs, the choices of the first seeds
// that render a Gateway and add a feature, until they have every feature.
func writeSeedCorpus(t *testing.T, want map[string]bool) {
	if err := os.RemoveAll(corpusDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(corpusDir, 0o755); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for seed := uint64(0); len(have) < len(want) && seed < 10000; seed++ {
		rec := snapgen.Record(snapgen.FromSeed(seed))
		s := smallSnapshot(rec)
		if len(render.Render(s.Input(), goldenTime).Files) == 0 {
			continue
		}
		added := false
		for _, f := range snapgen.Features(s) {
			if want[f] && !have[f] {
				have[f], added = true, true
			}
		}
		if !added {
			continue
		}
		entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", snapgen.Encode(rec.Draws))
		if err := os.WriteFile(filepath.Join(corpusDir, fmt.Sprintf("seed-%d", seed)), []byte(entry), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readCorpusEntry reads a fuzz corpus file holding one []byte.
func readCorpusEntry(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body, prefixed := strings.CutPrefix(string(data), "go test fuzz v1\n[]byte(")
	body, suffixed := strings.CutSuffix(strings.TrimSpace(body), ")")
	if !prefixed || !suffixed {
		t.Fatalf("%s is not a corpus entry of one []byte", path)
	}
	s, err := strconv.Unquote(body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}
