package node

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRepositoryIgnoresTagAndDigest(t *testing.T) {
	for image, want := range map[string]string{
		"gcr.io/k8s-staging-gateway-api/echo-basic:v20240412-v1.0.0-394-g40c666fd": "gcr.io/k8s-staging-gateway-api/echo-basic",
		"gcr.io/k8s-staging-gateway-api/echo-basic@sha256:abc":                     "gcr.io/k8s-staging-gateway-api/echo-basic",
		"ghcr.io/gatewall/nginx:1.2.3@sha256:abc":                                  "ghcr.io/gatewall/nginx",
		"localhost:5000/app:1":                                                     "localhost:5000/app",
		"nginx":                                                                    "docker.io/library/nginx",
		"nginx:1.27":                                                               "docker.io/library/nginx",
		"local/exec":                                                               "docker.io/local/exec",
	} {
		if got := Repository(image); got != want {
			t.Errorf("Repository(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestLookupMatchesByRepository(t *testing.T) {
	im := DefaultImages("/bin-dir")
	r, ok := im.Lookup("gcr.io/k8s-staging-gateway-api/echo-basic:any-tag")
	if !ok || !slices.Equal(r.Command, []string{"/bin-dir/echo-basic"}) {
		t.Errorf("echo image: %v %v", r, ok)
	}
	if _, ok := im.Lookup("local/exec:latest"); !ok {
		t.Error("local/exec with a tag not found")
	}
	if _, ok := im.Lookup("gcr.io/k8s-staging-gateway-api/echo-basic-other"); ok {
		t.Error("a different repository matched")
	}
}

func TestArgvFollowsKubernetesEntrypointRules(t *testing.T) {
	r := Runner{Command: []string{"/entry"}, Args: []string{"default"}}
	for _, tc := range []struct {
		c    corev1.Container
		want []string
	}{
		{corev1.Container{}, []string{"/entry", "default"}},
		{corev1.Container{Args: []string{"a"}}, []string{"/entry", "a"}},
		{corev1.Container{Command: []string{"/other"}}, []string{"/other"}},
		{corev1.Container{Command: []string{"/other"}, Args: []string{"b"}}, []string{"/other", "b"}},
	} {
		got, err := r.argv(&tc.c)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("argv(%+v) = %v, %v; want %v", tc.c, got, err, tc.want)
		}
	}
	if _, err := (Runner{}).argv(&corev1.Container{Image: "local/exec"}); err == nil {
		t.Error("no entrypoint and no command: want an error")
	}
}

func TestFindProgramResolvesLikeARuntime(t *testing.T) {
	if p, err := findProgram("sh", "/nonexistent:/bin:/usr/bin"); err != nil || (p != "/bin/sh" && p != "/usr/bin/sh") {
		t.Errorf("sh on PATH: %q, %v", p, err)
	}
	if _, err := findProgram("no-such-program-xyz", "/bin:/usr/bin"); err == nil {
		t.Error("missing program found")
	}
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findProgram(plain, ""); err == nil {
		t.Error("non-executable file accepted")
	}
	if _, err := findProgram("/bin", ""); err == nil {
		t.Error("directory accepted")
	}
}
