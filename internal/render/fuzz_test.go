package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/render"
)

// FuzzRender feeds arbitrary manifests through decoding, the whole
// translation and rendering: it must never panic, and rendering the same
// snapshot twice must give identical files and statuses. The golden inputs
// seed the corpus; `go test -fuzz FuzzRender ./internal/render` explores.
func FuzzRender(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := manifest.Decode(data)
		if err != nil {
			return
		}
		in, err := render.Decode(objs, graph.DefaultControllerName, plm.GroupAppProtect, nil)
		if err != nil {
			return
		}
		a := render.Render(in, goldenTime)
		b := render.Render(in, goldenTime)
		if len(a.Files) != len(b.Files) {
			t.Fatalf("rendered %d then %d Gateways", len(a.Files), len(b.Files))
		}
		for k, fa := range a.Files {
			fb := b.Files[k]
			if len(fa) != len(fb) {
				t.Fatalf("%s: %d then %d files", k, len(fa), len(fb))
			}
			for i := range fa {
				if fa[i].Path != fb[i].Path || !bytes.Equal(fa[i].Data, fb[i].Data) {
					t.Fatalf("%s: %s differs between two renders of the same input", k, fa[i].Path)
				}
			}
		}
		sa, errA := render.MarshalStatuses(a.Statuses)
		sb, errB := render.MarshalStatuses(b.Statuses)
		if errA != nil || errB != nil || !bytes.Equal(sa, sb) {
			t.Fatalf("statuses differ between two renders (%v, %v)", errA, errB)
		}
	})
}
