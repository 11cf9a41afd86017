package local

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestNodeIsReal: the node is a kubelet of the pinned version on containerd,
// Ready, with a node address that is not loopback.
func TestNodeIsReal(t *testing.T) {
	node, err := rt.Clientset.CoreV1().Nodes().Get(context.Background(), shared.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info := node.Status.NodeInfo
	if !strings.HasPrefix(info.KubeletVersion, "v1.37.") {
		t.Errorf("kubelet %s, want v1.37.x", info.KubeletVersion)
	}
	if !strings.HasPrefix(info.ContainerRuntimeVersion, "containerd://") {
		t.Errorf("container runtime %s, want containerd", info.ContainerRuntimeVersion)
	}
	ready := false
	for _, c := range node.Status.Conditions {
		ready = ready || c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	}
	if !ready {
		t.Errorf("node not Ready: %+v", node.Status.Conditions)
	}
	want := rt.Node.Network().NodeIP.String()
	found := false
	for _, a := range node.Status.Addresses {
		found = found || a.Type == corev1.NodeInternalIP && a.Address == want
	}
	if !found {
		t.Errorf("node addresses %+v, want InternalIP %s", node.Status.Addresses, want)
	}
}

// TestSampleAsAUserRunsIt: Gatewall's manager is a pod in gatewall-system
// running the manager image with its own ServiceAccount (so only
// config/rbac's permissions); the sample applied from config/samples is
// served through NGINX running the data-plane image.
func TestSampleAsAUserRunsIt(t *testing.T) {
	ctx := context.Background()
	pods, err := rt.ManagerPods(ctx)
	if err != nil || len(pods) != 1 {
		t.Fatalf("want one manager pod, got %d (%v)", len(pods), err)
	}
	mgr := pods[0]
	if got := mgr.Spec.Containers[0].Image; got != images.Manager {
		t.Errorf("manager image %s, want %s", got, images.Manager)
	}
	if mgr.Spec.ServiceAccountName != "gatewall-controller-manager" || mgr.Spec.NodeName != shared.Name {
		t.Errorf("manager pod: ServiceAccount %q on node %q", mgr.Spec.ServiceAccountName, mgr.Spec.NodeName)
	}
	if st := mgr.Status.ContainerStatuses; len(st) != 1 || !st[0].Ready || st[0].RestartCount != 0 {
		t.Errorf("manager container status %+v", st)
	}

	objs, err := manifest.Kustomize(filepath.Join(testenv.RepoRoot(), "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	if err := manifest.Apply(ctx, rt.Client, "local-test", objs); err != nil {
		t.Fatal(err)
	}
	var addr string
	eventually(t, 3*time.Minute, func() error {
		gw := &gatewayv1.Gateway{}
		if err := rt.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "gateway"}, gw); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") || len(gw.Status.Addresses) == 0 {
			return errf("Gateway not programmed: %+v", gw.Status.Conditions)
		}
		addr = gw.Status.Addresses[0].Value
		code, body, err := get(addr, "echo.example.com")
		if err != nil || code != 200 || !strings.Contains(body, `"pod": "echo-`) {
			return errf("GET http://%s/ (echo.example.com): %d %v %.100s", addr, code, err, body)
		}
		return nil
	})
	t.Logf("sample applied -> served through NGINX at %s: %s", addr, time.Since(applied).Round(time.Millisecond))

	dp := &corev1.PodList{}
	if err := rt.Client.List(ctx, dp, client.InNamespace("default"), client.MatchingLabels{provisioner.GatewayNameLabel: "gateway"}); err != nil {
		t.Fatal(err)
	}
	if len(dp.Items) == 0 {
		t.Fatal("no data-plane pod for the sample Gateway")
	}
	for _, p := range dp.Items {
		if got := p.Spec.Containers[0].Image; got != images.DataPlane {
			t.Errorf("data-plane pod %s runs %s, want %s", p.Name, got, images.DataPlane)
		}
	}
}
