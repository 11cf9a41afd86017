package local

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod reaches another pod's IP: how the data plane reaches its backends.
func TestPodReachesAnotherPodsIP(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "podnet")
	if _, err := env.client.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns, "echo", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	target := waitReadyPods(t, ns, "app=echo", 1, 60*time.Second)[0]
	// curl's output is one JSON document on one line after tr.
	script := fmt.Sprintf("curl -sS --max-time 5 http://%s:3000/from-pod | tr -d '\\n '; echo; exec sleep 1000", target.Status.PodIP)
	client := execPod(ns, "client", script)
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, client, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := waitPod(t, ns, "client", 30*time.Second, "client running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if c.Status.PodIP == target.Status.PodIP || c.Status.PodIP == "" {
		t.Fatalf("client IP %q, target IP %q", c.Status.PodIP, target.Status.PodIP)
	}
	eventually(t, 20*time.Second, "client got the echo answer", func() (bool, string) {
		got, err := podLogs(t, ns, "client", &corev1.PodLogOptions{})
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(got, `"pod":"`+target.Name+`"`) && strings.Contains(got, `"path":"/from-pod"`), got
	})
}
