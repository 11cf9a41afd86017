package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestRunOnSamples runs the render command's code on config/samples, as a
// user previewing the sample would (render -k config/samples, as the README
// says), and checks what it writes: nothing refused, the sample rendered.
func TestRunOnSamples(t *testing.T) {
	out := t.TempDir()
	var warnings bytes.Buffer
	err := render.Run(render.Options{
		Kustomizations: []string{"../../config/samples"},
		OutputDir:      out,
		ControllerName: graph.DefaultControllerName,
		Warnings:       &warnings,
	})
	if err != nil || strings.Contains(warnings.String(), "refusing") || strings.Contains(warnings.String(), "duplicate") {
		t.Fatalf("%v; warnings:\n%s", err, warnings.String())
	}
	conf := filepath.Join(out, "default_gateway", "etc", "nginx", "nginx.conf")
	if _, err := os.Stat(conf); err != nil {
		t.Fatalf("no nginx.conf for the sample Gateway: %v", err)
	}
	servers, err := os.ReadFile(filepath.Join(out, "default_gateway", filepath.FromSlash(config.ServersConfPath)))
	if err != nil || !strings.Contains(string(servers), "server_name echo.example.com;") {
		t.Fatalf("servers.conf does not serve the sample route: %v\n%s", err, servers)
	}
	status, err := os.ReadFile(filepath.Join(out, render.StatusFile))
	if err != nil || !strings.Contains(string(status), "kind: HTTPRoute") {
		t.Fatalf("status.yaml has no HTTPRoute status: %v", err)
	}
	// The files written, read back, pass nginx -t.
	var files []config.File
	root := filepath.Join(out, "default_gateway")
	err = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		files = append(files, config.File{Path: strings.TrimPrefix(p, root), Data: data, Mode: info.Mode()})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := nginxtest.Test(files); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
}

// TestRunRejectsUnreadableInput: input that cannot be read as objects at
// all fails the run, naming where.
func TestRunRejectsUnreadableInput(t *testing.T) {
	for name, manifest := range map[string]string{
		"not YAML":              "apiVersion: v1\nkind: Service\nmetadata: {name: [\n",
		"no apiVersion or kind": "metadata: {name: app}\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			err := render.Run(render.Options{Paths: []string{dir}, OutputDir: t.TempDir(), ControllerName: graph.DefaultControllerName})
			if err == nil || !strings.Contains(err.Error(), "bad.yaml") {
				t.Fatalf("want an error naming the file, got %v", err)
			}
		})
	}
}

// illTypedObjects holds objects of several kinds that do not decode (a
// number too large for its field, a string where a number belongs, an
// unknown field) next to a valid Gateway and route.
const illTypedObjects = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: ` + graph.DefaultControllerName + `}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: typo}
spec:
  gatewayClassName: nginx
  listners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /app}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /big}}]
    backendRefs: [{name: big, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: weighted}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: app, port: 80, weight: "heavy"}]
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: big}
spec:
  ports: [{name: http, port: 9223372036854775807}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-1, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: ["10.0.0.1"]}]
`

// refusedInIllTypedObjects are the objects of illTypedObjects that are
// refused, and what each one's refusal names.
var refusedInIllTypedObjects = map[string]string{
	"Gateway default/typo":       `unknown field "spec.listners"`,
	"HTTPRoute default/weighted": "cannot unmarshal string",
	"Service default/big":        "cannot unmarshal number 9223372036854775807",
}

// TestRunRefusesIllTypedObjects: objects that do not decode, in a
// multi-document file or built by a kustomization, are refused and named on
// the warnings and in status.yaml (their own status, or that of the route
// that uses them); every other object renders.
func TestRunRefusesIllTypedObjects(t *testing.T) {
	files := t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "all.yaml"), []byte(illTypedObjects), 0o644); err != nil {
		t.Fatal(err)
	}
	// The kustomization lists the same file and patches the valid Service
	// into an ill-typed one: kustomize builds it as it is.
	kust := t.TempDir()
	for name, data := range map[string]string{
		"all.yaml": illTypedObjects,
		"kustomization.yaml": `resources: [all.yaml]
patches:
- target: {kind: Service, name: app}
  patch: |-
    - op: add
      path: /spec/ports/0/appProtocol
      value: 8080
`,
	} {
		if err := os.WriteFile(filepath.Join(kust, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		opts    render.Options
		refused map[string]string
		app     string // what the /app location does
	}{
		{"multi-document file", render.Options{Paths: []string{files}}, refusedInIllTypedObjects, "proxy_pass"},
		{"kustomization", render.Options{Kustomizations: []string{kust}},
			merge(refusedInIllTypedObjects, map[string]string{"Service default/app": "ports.appProtocol of type string"}), "return 500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings bytes.Buffer
			tc.opts.OutputDir, tc.opts.ControllerName, tc.opts.Warnings = t.TempDir(), graph.DefaultControllerName, &warnings
			if err := render.Run(tc.opts); err != nil {
				t.Fatalf("readable input must not fail the render: %v", err)
			}
			st, err := os.ReadFile(filepath.Join(tc.opts.OutputDir, render.StatusFile))
			if err != nil {
				t.Fatal(err)
			}
			status := strings.Join(strings.Fields(string(st)), " ") // YAML folds long messages
			for obj, why := range tc.refused {
				if !strings.Contains(warnings.String(), "refusing "+obj+": it does not decode: ") || !strings.Contains(warnings.String(), why) {
					t.Errorf("warnings do not name %s (%s):\n%s", obj, why, warnings.String())
				}
				if !strings.Contains(status, obj+" could not be read") {
					t.Errorf("status.yaml does not name %s", obj)
				}
			}
			if strings.Count(warnings.String(), "refusing ") != len(tc.refused) {
				t.Errorf("refusals other than %v:\n%s", tc.refused, warnings.String())
			}
			servers, err := os.ReadFile(filepath.Join(tc.opts.OutputDir, "default_gw", filepath.FromSlash(config.ServersConfPath)))
			if err != nil {
				t.Fatalf("the valid Gateway is not rendered: %v", err)
			}
			app := regexp.MustCompile(`location "/app/" \{\s+(\S+)`).FindStringSubmatch(string(servers))
			if app == nil || !strings.HasPrefix(tc.app, app[1]) {
				t.Errorf("/app: %v, want %s:\n%s", app, tc.app, servers)
			}
			if _, err := os.Stat(filepath.Join(tc.opts.OutputDir, "default_typo")); err == nil {
				t.Error("the refused Gateway is rendered")
			}
		})
	}
}

// TestRunWarnsAboutUnbuiltKustomizations: -f reads a kustomization's
// directory as plain files, which is worth a warning.
func TestRunWarnsAboutUnbuiltKustomizations(t *testing.T) {
	var warnings bytes.Buffer
	err := render.Run(render.Options{Paths: []string{"../../config/samples"}, OutputDir: t.TempDir(),
		ControllerName: graph.DefaultControllerName, Warnings: &warnings})
	if err != nil || !strings.Contains(warnings.String(), "use -k ../../config/samples to build the kustomization") {
		t.Fatalf("%v; warnings:\n%s", err, warnings.String())
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestWriteStaysInOutputDir: a Gateway name the API server would refuse, or
// a file path leaving the Gateway's directory, is an error, and nothing is
// written outside the output directory (nor anything at all).
func TestWriteStaysInOutputDir(t *testing.T) {
	file := []config.File{{Path: config.MainConfPath, Data: []byte("x"), Mode: 0o644}}
	cases := map[string]render.Result{
		"gateway name": {Files: map[types.NamespacedName][]config.File{{Namespace: "default", Name: "../../../escaped"}: file}},
		"namespace":    {Files: map[types.NamespacedName][]config.File{{Namespace: "..", Name: "gw"}: file}},
		"file path": {Files: map[types.NamespacedName][]config.File{{Namespace: "default", Name: "gw"}: {
			{Path: config.IncludesDir + "../../../../../escaped.conf", Data: []byte("x"), Mode: 0o644}}}},
	}
	for name, res := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "a", "b", "out")
			if err := render.Write(res, out); err == nil {
				t.Fatal("written, want an error")
			}
			err := filepath.Walk(parent, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					t.Errorf("%s was written", p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRunRefusesInvalidGatewayName: a Gateway named to escape the output
// directory is not accepted (status.yaml says why) and nothing is written
// outside the output directory; Write refuses such a name too.
func TestRunRefusesInvalidGatewayName(t *testing.T) {
	dir, parent := t.TempDir(), t.TempDir()
	manifest := `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: ` + graph.DefaultControllerName + `}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: "../../escaped", namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
`
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(parent, "out")
	if err := render.Run(render.Options{Paths: []string{dir}, OutputDir: out, ControllerName: graph.DefaultControllerName}); err != nil {
		t.Fatalf("readable input must not fail the render: %v", err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "out" {
		t.Errorf("written in the output directory's parent: %v", entries)
	}
	st, err := os.ReadFile(filepath.Join(out, render.StatusFile))
	if err != nil || !strings.Contains(string(st), "is not a valid object name") {
		t.Errorf("status.yaml does not say why the Gateway is refused (%v):\n%s", err, st)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("files written for the refused Gateway: %v", entries)
	}
	res := render.Result{Files: map[types.NamespacedName][]config.File{{Namespace: "default", Name: "../../escaped"}: {{Path: "/etc/nginx/nginx.conf"}}}}
	if err := render.Write(res, t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a valid object name") {
		t.Errorf("Write must refuse the name: %v", err)
	}
}
