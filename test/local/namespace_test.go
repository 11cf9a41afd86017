package local

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNamespaceDeletionFinishes(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "doomed")
	if _, err := env.client.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns, "echo", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitReadyPods(t, ns, "app=echo", 2, 60*time.Second)
	sandboxes := map[string]bool{}
	for _, p := range pods {
		sandboxes[testPrefix+"-"+strings.ReplaceAll(p.Status.PodIP, ".", "-")] = true
	}
	if got := netnsWith(sandboxes); len(got) != 2 {
		t.Fatalf("pod network namespaces %v, found %v", sandboxes, got)
	}
	start := time.Now()
	if err := env.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "namespace deleted", func() (bool, string) {
		n, err := env.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if isNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, string(n.Status.Phase)
	})
	t.Logf("namespace with 2 pods deleted in %s", time.Since(start).Round(time.Millisecond))
	if got := netnsWith(sandboxes); len(got) != 0 {
		t.Errorf("pod network namespaces left: %v", got)
	}
}

// netnsWith lists which of names exist as network namespaces.
func netnsWith(names map[string]bool) []string {
	out, _ := exec.Command("ip", "netns", "list").Output()
	var found []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && names[f[0]] {
			found = append(found, f[0])
		}
	}
	return found
}
