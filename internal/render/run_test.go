package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// TestRunOnSamples runs the render command's code on config/samples, as a
// user previewing the sample would, and checks what it writes.
func TestRunOnSamples(t *testing.T) {
	out := t.TempDir()
	var warnings bytes.Buffer
	err := render.Run(render.Options{
		Paths:          []string{"../../config/samples"},
		OutputDir:      out,
		ControllerName: manager.DefaultControllerName,
		Warnings:       &warnings,
	})
	if err != nil {
		t.Fatal(err)
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

// TestRunRejectsUnreadableInput: a typo in a manifest is an error, not a silent skip.
func TestRunRejectsUnreadableInput(t *testing.T) {
	dir := t.TempDir()
	bad := "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: default}\nspec:\n  gatewayClassName: nginx\n  listners: []\n"
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err := render.Run(render.Options{Paths: []string{dir}, OutputDir: t.TempDir(), ControllerName: manager.DefaultControllerName})
	if err == nil || !strings.Contains(err.Error(), "listners") {
		t.Fatalf("want a strict-decoding error naming the unknown field, got %v", err)
	}
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
spec: {controllerName: ` + manager.DefaultControllerName + `}
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
	if err := render.Run(render.Options{Paths: []string{dir}, OutputDir: out, ControllerName: manager.DefaultControllerName}); err != nil {
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
