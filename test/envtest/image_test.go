package envtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/test/testenv"
)

// dockerfile is what TestManagerImage reads of build/manager/Dockerfile.
type dockerfile struct {
	user       string   // USER of the final stage
	entrypoint []string // ENTRYPOINT of the final stage
}

func readDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d dockerfile
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "USER":
			d.user = fields[1]
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(sc.Text(), fields[0]))), &d.entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT is not in exec form: %v", err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestManagerImage: build/manager/Dockerfile and config/manager agree: the
// image's entrypoint is what the Deployment runs, its user is the
// Deployment's non-root user, and the image name kustomize substitutes is
// the Makefile's default IMG. (The image itself is built by `make images`
// and run from config/default by the local-runtime tests, test/local.)
func TestManagerImage(t *testing.T) {
	root := testenv.RepoRoot()
	d := readDockerfile(t, filepath.Join(root, "build", "manager", "Dockerfile"))

	objs, err := manifest.ReadFiles(filepath.Join(root, "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &dep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("config/manager/manager.yaml: want one manager container, got %d", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(d.entrypoint) == 0 {
		t.Error("the Dockerfile has no ENTRYPOINT")
	}
	if len(c.Command) > 0 && !slices.Equal(c.Command, d.entrypoint) {
		t.Errorf("the Deployment runs %v, the image's entrypoint is %v", c.Command, d.entrypoint)
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil {
		t.Fatal("the manager container sets no runAsUser/runAsGroup")
	}
	if want := fmt.Sprintf("%d:%d", *sc.RunAsUser, *sc.RunAsGroup); d.user != want {
		t.Errorf("the image runs as %q, the Deployment as %s", d.user, want)
	}
	if strings.HasPrefix(d.user, "0") || d.user == "root" {
		t.Errorf("the image runs as root (%s)", d.user)
	}

	// The Deployment's image placeholder, kustomize's substitution, and the
	// Makefile's default IMG name one image.
	var kust struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "manager", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &kust); err != nil {
		t.Fatal(err)
	}
	if len(kust.Images) != 1 || !strings.HasPrefix(c.Image, kust.Images[0].Name+":") {
		t.Fatalf("config/manager/kustomization.yaml images %+v do not substitute the Deployment's image %s", kust.Images, c.Image)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^IMG \?= (\S+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no default IMG")
	}
	if got, want := kust.Images[0].NewName+":"+kust.Images[0].NewTag, string(m[1]); got != want {
		t.Errorf("config/manager deploys %s by default, the Makefile's IMG is %s", got, want)
	}
}
