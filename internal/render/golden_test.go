package render_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/graph"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/confcheck"
	"github.com/gatewall/gatewall/test/nginxtest"
)

var update = flag.Bool("update", false, "rewrite the golden .out.yaml files")

// goldenTime stamps every condition in golden files.
var goldenTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// injectionMarker appears in every malicious value of the injection cases:
// none may reach a rendered file.
const injectionMarker = "evil"

// golden is the expected output of a case: statuses, every data-plane file,
// and what the renderer warned about (cases named unreadable* only).
type golden struct {
	Statuses []map[string]any             `json:"statuses"`
	Files    map[string]map[string]string `json:"files"`
	// Endpoints are each Gateway's dynamic endpoints (render.Result.Endpoints).
	Endpoints map[string]endpoints.Set `json:"endpoints,omitempty"`
	// Resolvers are how each Gateway's data plane resolves their DNS
	// names, when its NginxProxy sets dnsResolver (render.Result.Resolvers).
	Resolvers map[string]endpoints.Resolver `json:"resolvers,omitempty"`
	// KeySources are the remote JWT key sets each Gateway's data plane
	// fetches (render.Result.KeySources).
	KeySources map[string]endpoints.KeySources `json:"keySources,omitempty"`
	Warnings   []string                        `json:"warnings,omitempty"`
}

// warningsExpected says whether a case holds objects the renderer skips or
// refuses on purpose; any other case must decode cleanly, so that a typo in
// a fixture fails instead of being refused quietly.
func warningsExpected(in string) bool {
	return strings.HasPrefix(filepath.Base(in), "unreadable")
}

// TestGolden renders every testdata/*.in.yaml and compares statuses and files
// with testdata/*.out.yaml (regenerate with -update). Every rendered
// configuration must pass real `nginx -t`.
func TestGolden(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	cases, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range cases {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			got := renderCase(t, in)
			out := strings.TrimSuffix(in, ".in.yaml") + ".out.yaml"
			if *update {
				if err := os.WriteFile(out, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run with -update and review the diff):\n%s", out, firstDiff(string(want), string(got)))
			}
		})
	}
}

func renderCase(t *testing.T, in string) []byte {
	t.Helper()
	input, warnings := decodeCase(t, in)
	res := render.Render(input, goldenTime)
	checkStatusBounds(t, res.Statuses)
	g := golden{Files: map[string]map[string]string{}, Endpoints: map[string]endpoints.Set{}}
	for k, set := range res.Endpoints {
		g.Endpoints[k.String()] = set
	}
	for k, r := range res.Resolvers {
		if g.Resolvers == nil {
			g.Resolvers = map[string]endpoints.Resolver{}
		}
		g.Resolvers[k.String()] = r
	}
	for k, ks := range res.KeySources {
		if g.KeySources == nil {
			g.KeySources = map[string]endpoints.KeySources{}
		}
		g.KeySources[k.String()] = ks
	}
	if warningsExpected(in) {
		g.Warnings = strings.Split(strings.TrimSuffix(warnings, "\n"), "\n")
	}
	statuses, err := render.MarshalStatuses(res.Statuses)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := manifest.Decode(statuses)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		g.Statuses = append(g.Statuses, d.Object)
	}
	injection := strings.HasPrefix(filepath.Base(in), "injection")
	for k, files := range res.Files {
		out, err := nginxtest.Test(files)
		if err != nil {
			t.Errorf("gateway %s: %v\n%s", k, err, out)
		} else if ws := nginxtest.Warnings(out); len(ws) > 0 {
			t.Errorf("gateway %s: NGINX warns:\n%s", k, strings.Join(ws, "\n"))
		}
		if err := confcheck.Check(files); err != nil {
			t.Errorf("gateway %s: %v", k, err)
		}
		m := map[string]string{}
		for _, f := range files {
			if strings.HasPrefix(f.Path, config.LuaDir) {
				continue // Gatewall's Lua modules, the same in every configuration (nginx/config's own tests)
			}
			m[f.Path] = string(f.Data)
			if injection && strings.Contains(string(f.Data), injectionMarker) {
				t.Errorf("gateway %s: %s contains the injected value %q", k, f.Path, injectionMarker)
			}
		}
		g.Files[k.String()] = m
	}
	data, err := yaml.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// applyFlags sets what a case's flags file says: "--snippets" (the
// manager's --snippets) is the one flag cases need so far.
func applyFlags(t *testing.T, in *graph.Input, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range strings.Fields(string(data)) {
		switch flag {
		case "--snippets":
			in.Snippets = true
		default:
			t.Fatalf("%s: flag %q is not one the golden cases take", path, flag)
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n- " + wl + "\n+ " + gl
		}
	}
	return ""
}

// decodeCase reads a golden case's input as render does, with its flags
// and bundles, and says what the renderer warned about.
func decodeCase(t *testing.T, in string) (*graph.Input, string) {
	t.Helper()
	objs, err := manifest.ReadFiles(in)
	if err != nil {
		t.Fatal(err)
	}
	var warnings bytes.Buffer
	input, err := render.Decode(objs, graph.DefaultControllerName, plm.GroupAppProtect, &warnings)
	if err != nil {
		t.Fatalf("decoding %s: %v", in, err)
	}
	if warnings.Len() > 0 && !warningsExpected(in) {
		t.Fatalf("%s has objects the renderer skips or refuses:\n%s", in, warnings.String())
	}
	// testdata/<case>.flags lists the case's render flags, a line each
	// (the manager's it stands for).
	applyFlags(t, input, strings.TrimSuffix(in, ".in.yaml")+".flags")
	// testdata/<case>.bundles/ holds the case's WAF bundles, standing in for PLM storage.
	if dir := strings.TrimSuffix(in, ".in.yaml") + ".bundles"; exists(dir) {
		if err := render.LoadBundles(input, dir); err != nil {
			t.Fatal(err)
		}
	}
	return input, warnings.String()
}
