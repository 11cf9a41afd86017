package manager

import (
	"flag"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/gatewall/gatewall/internal/manifest"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
)

// configDir is the repository's config/ directory.
func configDir() string {
	_, file, _, _ := runtime.Caller(0)
	dir, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "config"))
	return dir
}

// deployedManager returns the manager Deployment `make deploy` applies.
func deployedManager(t *testing.T) *appsv1.Deployment {
	t.Helper()
	objs, err := manifest.Kustomize(filepath.Join(configDir(), "default"))
	if err != nil {
		t.Fatal(err)
	}
	return managerDeployment(t, objs)
}

// managerDeployment is the Deployment among a build's objects.
func managerDeployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Fatal("the build has no Deployment")
	return nil
}

// TestDeployedManagerWritesOnlyToVolumes: the deployed manager's root
// filesystem is read-only, so every directory its options make it write in
// is a writable volume, and the agent TLS Secret it serves is mounted where
// --agent-tls-dir says (the manager writes no copy of it).
func TestDeployedManagerWritesOnlyToVolumes(t *testing.T) {
	checkWritesOnlyToVolumes(t, deployedManager(t))
}

func checkWritesOnlyToVolumes(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec
	var c *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == "manager" {
			c = &pod.Containers[i]
		}
	}
	if c == nil {
		t.Fatal("no manager container")
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the manager's root filesystem is not read-only: this test's premise")
	}
	var opts Options
	fs := flag.NewFlagSet("gatewall", flag.ContinueOnError)
	BindFlags(fs, &opts)
	if err := fs.Parse(append(append([]string(nil), c.Command...), c.Args...)); err != nil {
		t.Fatalf("the manager's arguments: %v", err)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	// mountOf returns the volume mounted at dir or above it.
	mountOf := func(dir string) (corev1.VolumeMount, corev1.Volume, bool) {
		for _, m := range c.VolumeMounts {
			if dir == m.MountPath || strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/") {
				return m, volumes[m.Name], true
			}
		}
		return corev1.VolumeMount{}, corev1.Volume{}, false
	}
	for _, dir := range opts.WritesTo() {
		m, v, ok := mountOf(dir)
		switch {
		case !ok:
			t.Errorf("the manager writes in %s, which no volume mounts: it would be the read-only root filesystem", dir)
		case m.ReadOnly || (v.EmptyDir == nil && v.PersistentVolumeClaim == nil && v.Ephemeral == nil):
			t.Errorf("the manager writes in %s, mounted from volume %s, which is not writable", dir, m.Name)
		}
	}
	if opts.Agent.ListenAddress == "" {
		t.Fatal("the deployed manager serves no agents: the agent TLS checks below would be moot")
	}
	if opts.Agent.TLSDir == "" {
		t.Fatal("the deployed manager does not read the agent TLS Secret from a mounted volume (--agent-tls-dir)")
	}
	secret, err := SecretName(opts.Agent.TLSSecret, d.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	m, v, ok := mountOf(opts.Agent.TLSDir)
	switch {
	case !ok || m.MountPath != opts.Agent.TLSDir:
		t.Errorf("--agent-tls-dir %s is not a volume mount", opts.Agent.TLSDir)
	case v.Secret == nil || v.Secret.SecretName != secret.Name || secret.Namespace != d.Namespace:
		t.Errorf("--agent-tls-dir %s mounts volume %+v, not Secret %s", opts.Agent.TLSDir, v.VolumeSource, secret)
	case v.Secret.Optional == nil || !*v.Secret.Optional:
		t.Errorf("the agent TLS Secret volume is not optional: the manager creates the Secret, so its first pod would never start")
	}
	if opts.Agent.ReloadMonitoringPeriod <= 0 {
		t.Errorf("--agent-reload-monitoring-period %s: agents would wait their 10 s default after every reload", opts.Agent.ReloadMonitoringPeriod)
	}
}

// TestPLMCacheVolumeComponent: an overlay of config/default with
// config/components/plm-cache-volume keeps the bundle cache on the claim it
// adds (the manager still writes only to volumes), recreates the pod
// rather than rolling it (the claim is ReadWriteOnce), and the claim holds
// more than the cache may.
func TestPLMCacheVolumeComponent(t *testing.T) {
	objs, err := manifest.KustomizeOverlay(filepath.Join(configDir(), "default"), filepath.Join(configDir(), "components", "plm-cache-volume"))
	if err != nil {
		t.Fatal(err)
	}
	d := managerDeployment(t, objs)
	checkWritesOnlyToVolumes(t, d)
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %q, want Recreate", d.Spec.Strategy.Type)
	}
	var claim string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "plm-cache" && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim == "" {
		t.Fatalf("the plm-cache volume is not a claim: %+v", d.Spec.Template.Spec.Volumes)
	}
	for _, o := range objs {
		if o.GetKind() != "PersistentVolumeClaim" || o.GetName() != claim {
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, pvc); err != nil {
			t.Fatal(err)
		}
		if pvc.Namespace != d.Namespace {
			t.Errorf("claim in namespace %q, the Deployment in %q", pvc.Namespace, d.Namespace)
		}
		if size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; size.Value() <= plmfetch.DefaultMaxCacheSize {
			t.Errorf("the claim requests %s, no more than the cache may hold (%d bytes)", size.String(), plmfetch.DefaultMaxCacheSize)
		}
		return
	}
	t.Errorf("no PersistentVolumeClaim %s in the build", claim)
}

// TestSnippetsComponent: config/default leaves snippets off, and an
// overlay with config/components/snippets turns them on (--snippets).
func TestSnippetsComponent(t *testing.T) {
	enabled := func(objs []*unstructured.Unstructured) bool {
		d := managerDeployment(t, objs)
		var opts Options
		fs := flag.NewFlagSet("gatewall", flag.ContinueOnError)
		BindFlags(fs, &opts)
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name != "manager" {
				continue
			}
			if err := fs.Parse(append(append([]string(nil), c.Command...), c.Args...)); err != nil {
				t.Fatalf("the manager's arguments: %v", err)
			}
		}
		return opts.Snippets
	}
	base, err := manifest.Kustomize(filepath.Join(configDir(), "default"))
	if err != nil {
		t.Fatal(err)
	}
	if enabled(base) {
		t.Error("config/default enables snippets: they are a privilege an installation grants")
	}
	objs, err := manifest.KustomizeOverlay(filepath.Join(configDir(), "default"), filepath.Join(configDir(), "components", "snippets"))
	if err != nil {
		t.Fatal(err)
	}
	if !enabled(objs) {
		t.Error("config/components/snippets does not enable snippets")
	}
}
