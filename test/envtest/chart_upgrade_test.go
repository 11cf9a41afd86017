package envtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/internal/helm"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestChartUpgradeKeepsPlacement: the platform team writes what data planes
// may carry into the dataplane-placement ConfigMap the chart installs (the
// manager-placement policy's parameters; docs/security.md), with kubectl,
// after `helm install`. Every later way of running the chart again keeps
// what they wrote: `helm upgrade` with the same values and with changed
// ones, `helm upgrade --force` (which replaces objects with the rendering
// instead of patching them), `helm rollback` to the first revision (whose
// rendering had the ConfigMap empty), and `helm uninstall` then `helm
// install` (the ConfigMap is kept, helm.sh/resource-policy: keep). Deleted,
// it is made again, empty, by the next upgrade. As a release object, before,
// --force emptied it, and uninstall deleted it.
func TestChartUpgradeKeepsPlacement(t *testing.T) {
	ctx := context.Background()
	root := testenv.RepoRoot()
	h := helm.Helm{Path: filepath.Join(root, helm.Binary), Home: t.TempDir(), Kubeconfig: writeKubeconfig(t)}
	const ns = "gatewall-upgrade"
	// A release of its own, whose cluster-wide objects (roles, admission
	// policies, GatewayClass) no other test of this package makes.
	values := map[string]any{
		"fullnameOverride": "upgrade-gatewall",
		"nginxGateway":     map[string]any{"gatewayClassName": "upgrade", "gatewayControllerName": "example.com/gatewall-upgrade"},
	}
	release := helm.Release{Name: "upgrade", Namespace: ns, Chart: filepath.Join(root, "charts", "gatewall"), Values: values}
	key := client.ObjectKey{Namespace: ns, Name: "upgrade-gatewall-dataplane-placement"}
	t.Cleanup(func() {
		_ = h.Uninstall(context.Background(), release.Name, ns)
		_ = env.Client.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
	})
	if err := h.Install(ctx, release); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, key, cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 0 {
		t.Fatalf("the chart installs %s with %v; want it empty", key.Name, cm.Data)
	}
	written := map[string]string{"nodeSelectors": "kubernetes.io/os=linux\ngatewall.io/edge=true", "hostPorts": "8080"}
	cm.Data = written
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	kept := func(t *testing.T, after string) {
		t.Helper()
		got := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, key, got); err != nil {
			t.Fatalf("after %s: %v", after, err)
		}
		if !reflect.DeepEqual(got.Data, written) {
			t.Errorf("after %s the ConfigMap holds %v; want the platform team's %v", after, got.Data, written)
		}
	}

	t.Run("helm upgrade with the same values", func(t *testing.T) {
		if err := h.Install(ctx, release); err != nil {
			t.Fatal(err)
		}
		kept(t, "helm upgrade")
	})
	t.Run("helm upgrade with changed values", func(t *testing.T) {
		changed := release
		changed.Values = map[string]any{
			"fullnameOverride": "upgrade-gatewall",
			"nginxGateway": map[string]any{"gatewayClassName": "upgrade", "gatewayControllerName": "example.com/gatewall-upgrade",
				"replicas": 2, "leaderElection": map[string]any{"lockName": "upgrade-lease"}},
		}
		if err := h.Install(ctx, changed); err != nil {
			t.Fatal(err)
		}
		kept(t, "helm upgrade with other values")
	})
	t.Run("helm upgrade --force", func(t *testing.T) {
		runHelm(t, h, values, "upgrade", release.Name, release.Chart, "--namespace", ns, "--force")
		kept(t, "helm upgrade --force")
	})
	t.Run("helm rollback to the first revision", func(t *testing.T) {
		runHelm(t, h, nil, "rollback", release.Name, "1", "--namespace", ns)
		kept(t, "helm rollback 1")
	})
	t.Run("helm uninstall and install again", func(t *testing.T) {
		if err := h.Uninstall(ctx, release.Name, ns); err != nil {
			t.Fatal(err)
		}
		kept(t, "helm uninstall")
		if err := h.Install(ctx, release); err != nil {
			t.Fatal(err)
		}
		kept(t, "helm install after helm uninstall")
	})
	t.Run("deleted, helm upgrade makes it again, empty", func(t *testing.T) {
		if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatal(err)
		}
		if err := h.Install(ctx, release); err != nil {
			t.Fatal(err)
		}
		got := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, key, got); err != nil {
			t.Fatalf("after helm upgrade: %v; want the ConfigMap made again", err)
		}
		if len(got.Data) != 0 {
			t.Errorf("made again with %v; want it empty", got.Data)
		}
	})
}

// runHelm runs h's helm with args (and values as a values file, when not
// nil) against h's cluster.
func runHelm(t *testing.T, h helm.Helm, values map[string]any, args ...string) {
	t.Helper()
	if values != nil {
		f := filepath.Join(t.TempDir(), "values.json")
		data, err := json.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--values", f)
	}
	cmd := exec.Command(h.Path, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+h.Kubeconfig,
		"HELM_CACHE_HOME="+filepath.Join(h.Home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(h.Home, "config"),
		"HELM_DATA_HOME="+filepath.Join(h.Home, "data"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %v: %v: %s", args, err, out.String())
	}
}

// writeKubeconfig writes a kubeconfig for envtest's API server, as its
// administrator, and returns its path.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: env.Config.CertData, ClientKeyData: env.Config.KeyData,
		Token: env.Config.BearerToken}
	c.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	c.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}
