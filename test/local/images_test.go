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

func TestUnknownImageStaysPending(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "unknown-image")
	pod := execPod(ns, "mystery", "true")
	pod.Spec.Containers[0].Image = "registry.example.com/team/mystery:1.0"
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ns, "mystery", 30*time.Second, "mystery reports its image", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ErrImageNeverPull"
	})
	msg := p.Status.ContainerStatuses[0].State.Waiting.Message
	if !strings.Contains(msg, "registry.example.com/team/mystery:1.0") || !strings.Contains(msg, "no local runner") {
		t.Errorf("message %q does not name the image and the missing runner", msg)
	}
	if p.Status.Phase != corev1.PodPending || isReady(p) {
		t.Errorf("pod with an unknown image: %s", podState(p))
	}
	// `kubectl describe pod` shows why, as with a real kubelet.
	eventually(t, 10*time.Second, "ErrImageNeverPull event from the kubelet", func() (bool, string) {
		events, err := env.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=mystery"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.Reason == "ErrImageNeverPull" && e.Source.Component == "kubelet" && e.Type == corev1.EventTypeWarning {
				return true, ""
			}
		}
		return false, fmt.Sprint(len(events.Items), " events")
	})
}

func TestImageWithMissingProgramExplainsHowToBuildIt(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "missing-tool")
	pod := execPod(ns, "tool", "")
	pod.Spec.Containers[0].Image = missingImage + ":v1"
	pod.Spec.Containers[0].Command = nil
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ns, "tool", 30*time.Second, "tool reports its missing program", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "RunContainerError"
	})
	msg := p.Status.ContainerStatuses[0].State.Waiting.Message
	if !strings.Contains(msg, "/nonexistent/tool") || !strings.Contains(msg, "run hack/tool.sh to build it") {
		t.Errorf("message %q does not name the program and how to build it", msg)
	}
}
