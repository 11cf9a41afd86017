package envtest

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/test/testenv"
)

// copyTree copies the repository, without bin/, .git and .local, into a
// temporary directory: a checkout that is not a git repository, whose files
// the Makefile's targets may change without touching the real tree.
func copyTree(t *testing.T) string {
	t.Helper()
	root, dst := testenv.RepoRoot(), t.TempDir()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case rel == "bin" || rel == ".git" || rel == ".local":
			if !d.IsDir() {
				return nil // a worktree's .git is a file: SkipDir would skip the rest of the root
			}
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// runMake runs make in dir with the repository's tools, never rebuilding
// them, and returns its combined output and whether it succeeded.
func runMake(t *testing.T, dir string, args ...string) (string, bool) {
	t.Helper()
	bin := filepath.Join(testenv.RepoRoot(), "bin")
	gen, kustomize := filepath.Join(bin, "controller-gen"), filepath.Join(bin, "kustomize")
	args = append([]string{"-C", dir, "-o", gen, "-o", kustomize,
		"CONTROLLER_GEN=" + gen, "KUSTOMIZE=" + kustomize}, args...)
	cmd := exec.Command("make", args...)
	// Not the jobserver of a make this test may run under.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestMakeDeployLeavesTreeUnchanged: `make deploy IMG=…` deploys the image it
// is given and modifies no file of the checkout (it once rewrote
// config/manager/kustomization.yaml, which then failed verify-generated).
func TestMakeDeployLeavesTreeUnchanged(t *testing.T) {
	dir := copyTree(t)
	const img = "registry.example.com/team/gatewall:v9.9.9"
	before := snapshot(t, filepath.Join(dir, "config"))
	applied := filepath.Join(t.TempDir(), "applied.yaml")
	kubectl := filepath.Join(t.TempDir(), "kubectl")
	if err := os.WriteFile(kubectl, []byte("#!/bin/sh\n# fake kubectl: keeps what it is asked to apply\ncat > '"+applied+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, ok := runMake(t, dir, "deploy", "IMG="+img, "KUBECTL="+kubectl); !ok {
		t.Fatalf("make deploy failed:\n%s", out)
	}
	if after := snapshot(t, filepath.Join(dir, "config")); !equalSnapshots(before, after) {
		t.Errorf("make deploy modified files under config/: %v", changed(before, after))
	}
	objs, err := manifest.ReadFiles(applied)
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			images = append(images, c.(map[string]any)["image"].(string))
		}
	}
	if len(images) != 1 || images[0] != img {
		t.Errorf("deployed images %v, want [%s]", images, img)
	}
}

// TestMakeVerifyGenerated: verify-generated fails exactly when regenerating
// changes the generated files, also outside a git checkout (it once only
// asked git, and passed silently without one).
func TestMakeVerifyGenerated(t *testing.T) {
	dir := copyTree(t)
	if out, ok := runMake(t, dir, "generate", "manifests"); !ok {
		t.Fatalf("make generate manifests failed:\n%s", out)
	}
	before := snapshot(t, dir)
	if out, ok := runMake(t, dir, "verify-generated"); !ok {
		t.Fatalf("verify-generated fails on freshly generated files:\n%s", out)
	}
	if after := snapshot(t, dir); !equalSnapshots(before, after) {
		t.Errorf("verify-generated modified the tree: %v", changed(before, after))
	}

	crd := filepath.Join(dir, "config", "crd", "bases", "gateway.nginx.org_nginxproxies.yaml")
	data, err := os.ReadFile(crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crd, bytes.Replace(data, []byte("description:"), []byte("description: edited by hand"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, "config", "crd", "bases", "gateway.nginx.org_oldkinds.yaml")
	if err := os.WriteFile(leftover, []byte("# a CRD no type generates any more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The chart's copies of the RBAC rules and admission policies are
	// generated too (make manifests makes them): a rule edited in the chart
	// alone would make it grant what config/rbac does not.
	role := filepath.Join(dir, "charts", "gatewall", "files", "role.yaml")
	data, err = os.ReadFile(role)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(role, bytes.Replace(data, []byte("- get\n"), []byte("- get\n  - update\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := runMake(t, dir, "verify-generated")
	if ok {
		t.Fatalf("verify-generated passed with a hand-edited CRD, a leftover one and a hand-edited chart rule:\n%s", out)
	}
	for _, want := range []string{"gateway.nginx.org_nginxproxies.yaml (differs)", "gateway.nginx.org_oldkinds.yaml (no generator produces it)",
		"charts/gatewall/files/role.yaml (differs)"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify-generated output does not name %q:\n%s", want, out)
		}
	}
}

// snapshot maps every regular file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func equalSnapshots(a, b map[string]string) bool { return len(changed(a, b)) == 0 }

func changed(a, b map[string]string) []string {
	var out []string
	for f, v := range a {
		if w, ok := b[f]; !ok || w != v {
			out = append(out, f)
		}
	}
	for f := range b {
		if _, ok := a[f]; !ok {
			out = append(out, f)
		}
	}
	return out
}
