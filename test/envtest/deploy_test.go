package envtest

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestDeployManifests builds config/default the way `make deploy` does and
// applies every object to the real API server with server-side dry-run (the
// namespace for real, since namespaced objects need it to exist).
func TestDeployManifests(t *testing.T) {
	ctx := context.Background()
	objs, err := manifest.Kustomize(filepath.Join(testenv.RepoRoot(), "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var namespaces, rest []*unstructured.Unstructured
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "Namespace" {
			namespaces = append(namespaces, o)
		} else {
			rest = append(rest, o)
		}
	}
	// CRDs: NginxProxy, one per policy kind of Gatewall's API (the
	// engine's other kinds are the Gateway API's) and one per filter kind
	// ExtensionRef filters may name; ClusterRoles: the manager's and the metrics reader's;
	// Services: the agent server's and the metrics'; admission policies
	// (and their bindings): the manager's writes, pods, placement, Services,
	// scaling and Secrets; ConfigMaps: the placement policy's
	// dataplane-placement.
	for kind, want := range map[string]int{
		"Namespace": 1, "CustomResourceDefinition": 1 + gatewallKinds() + len(graph.ExtensionFilterKinds), "Deployment": 1, "ServiceAccount": 1,
		"ClusterRole": 2, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "Service": 2,
		"ValidatingAdmissionPolicy": 6, "ValidatingAdmissionPolicyBinding": 6, "ConfigMap": 1,
	} {
		if kinds[kind] != want {
			t.Errorf("config/default has %d %s, want %d", kinds[kind], kind, want)
		}
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", namespaces); err != nil {
		t.Fatal(err)
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", rest, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
}

// TestSamples applies every file under config/samples with server-side dry-run.
func TestSamples(t *testing.T) {
	objs, err := manifest.ReadFiles(filepath.Join(testenv.RepoRoot(), "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) < 10 {
		t.Fatalf("found only %d sample objects", len(objs))
	}
	if err := manifest.Apply(context.Background(), env.Client, "gatewall-test", objs, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
}

// TestRBACCoversCRDs: the manager's ClusterRole grants access to every CRD
// Gatewall reconciles and to its status, by the CRD's real plural.
func TestRBACCoversCRDs(t *testing.T) {
	objs, err := manifest.Kustomize(filepath.Join(testenv.RepoRoot(), "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	var plurals []string
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
			for _, r := range rules {
				groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
				resources, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
				for _, g := range groups {
					for _, res := range resources {
						granted[g+"/"+res] = true
					}
				}
			}
		case "CustomResourceDefinition":
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
			plurals = append(plurals, group+"/"+plural)
		}
	}
	for _, p := range plurals {
		for _, res := range []string{p, p + "/status"} {
			if !granted[res] {
				t.Errorf("the manager's ClusterRole does not grant %s", res)
			}
		}
	}
}

// gatewallKinds counts the policy kinds of Gatewall's own API.
func gatewallKinds() int {
	n := 0
	for _, k := range policy.Kinds {
		if _, ok := k.NewObject().(v1alpha1.Policy); ok {
			n++
		}
	}
	return n
}

// TestPLMCacheVolumeComponent applies an overlay of config/default with
// config/components/plm-cache-volume with server-side dry-run: the claim and
// the patched Deployment are valid objects.
func TestPLMCacheVolumeComponent(t *testing.T) {
	ctx := context.Background()
	config := filepath.Join(testenv.RepoRoot(), "config")
	objs, err := manifest.KustomizeOverlay(filepath.Join(config, "default"), filepath.Join(config, "components", "plm-cache-volume"))
	if err != nil {
		t.Fatal(err)
	}
	var namespaces, rest []*unstructured.Unstructured
	claims := 0
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			namespaces = append(namespaces, o)
		case "PersistentVolumeClaim":
			claims++
			rest = append(rest, o)
		case "CustomResourceDefinition": // TestDeployManifests applies them
		default:
			rest = append(rest, o)
		}
	}
	if claims != 1 {
		t.Errorf("%d claims, want 1", claims)
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", namespaces); err != nil {
		t.Fatal(err)
	}
	if err := manifest.Apply(ctx, env.Client, "gatewall-test", rest, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
}
