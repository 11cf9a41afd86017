package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
