package local

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/local/node"
)

func TestInitContainersRunToCompletionFirst(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "init")
	pod := execPod(ns, "staged", "cat /var/lib/gatewall-local-test/work/order; exec sleep 1000")
	pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	mount := []corev1.VolumeMount{{Name: "work", MountPath: "/var/lib/gatewall-local-test/work"}}
	pod.Spec.Containers[0].VolumeMounts = mount
	pod.Spec.InitContainers = []corev1.Container{
		{Name: "first", Image: node.ExecImage, Command: []string{"sh", "-c", "sleep 1; echo first >> /var/lib/gatewall-local-test/work/order"}, VolumeMounts: mount},
		{Name: "second", Image: node.ExecImage, Command: []string{"sh", "-c", "echo second >> /var/lib/gatewall-local-test/work/order"}, VolumeMounts: mount},
	}
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ns, "staged", 30*time.Second, "staged pod initializing", func(p *corev1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 2 && p.Status.InitContainerStatuses[0].State.Running != nil
	})
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("pod with a running init container is %s", p.Status.Phase)
	}
	p = waitPod(t, ns, "staged", 30*time.Second, "staged pod ready", isReady)
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" || !cs.Ready {
			t.Errorf("init container %s: %+v", cs.Name, cs.State)
		}
	}
	eventually(t, 10*time.Second, "app container saw both init containers' work in order", func() (bool, string) {
		got, err := podLogs(t, ns, "staged", &corev1.PodLogOptions{})
		return err == nil && got == "first\nsecond\n", got
	})
}
