package local

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// A pod reaches a service on the host's loopback by a node alias through a
// HostForward: how the data plane reaches a controller running on the host.
func TestPodReachesHostServiceByNodeAlias(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "hostfwd")
	script := fmt.Sprintf("curl -sS --max-time 5 http://control-plane.local:%d/; echo; exec sleep 1000", hostForwardPort)
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, execPod(ns, "caller", script), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "caller reached the host service", func() (bool, string) {
		got, err := podLogs(t, ns, "caller", &corev1.PodLogOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got == "host-service\n", got
	})
}

// The cluster installs the CRDs it is given.
func TestClusterServesInstalledCRDs(t *testing.T) {
	dyn, err := dynamic.NewForConfig(env.cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	if _, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("listing GatewayClasses: %v", err)
	}
}
