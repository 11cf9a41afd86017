package local

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestExitedContainerIsRestarted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "restart")
	// The first run exits 3; the restarted one finds its marker in the
	// pod's emptyDir and keeps running.
	pod := execPod(ns, "crasher", "if [ -e /var/lib/gatewall-local-test/data/ran ]; then exec sleep 1000; fi; touch /var/lib/gatewall-local-test/data/ran; echo crashing; exit 3")
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/gatewall-local-test/data"}}
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ns, "crasher", 30*time.Second, "restarted once and running", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil && isReady(p)
	})
	cs := p.Status.ContainerStatuses[0]
	last := cs.LastTerminationState.Terminated
	if last == nil || last.ExitCode != 3 || last.Reason != "Error" || last.FinishedAt.IsZero() {
		t.Fatalf("lastState = %+v", cs.LastTerminationState)
	}
	if last.ContainerID == cs.ContainerID {
		t.Errorf("the restarted container kept the ID %s", cs.ContainerID)
	}
	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s", p.Status.Phase)
	}
	// The previous instance's log is still readable.
	got, err := podLogs(t, ns, "crasher", &corev1.PodLogOptions{Previous: true})
	if err != nil || got != "crashing\n" {
		t.Errorf("previous logs = %q, %v", got, err)
	}
	time.Sleep(time.Second)
	p, err = env.client.CoreV1().Pods(ns).Get(ctx, "crasher", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Status.ContainerStatuses[0].RestartCount; n != 1 {
		t.Errorf("restartCount went on to %d", n)
	}
}

func TestRestartPolicyNeverEndsThePod(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "never")
	ok := execPod(ns, "ok", "exit 0")
	ok.Spec.RestartPolicy = corev1.RestartPolicyNever
	bad := execPod(ns, "bad", "exit 7")
	bad.Spec.RestartPolicy = corev1.RestartPolicyNever
	for _, p := range []*corev1.Pod{ok, bad} {
		if _, err := env.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPod(t, ns, "ok", 30*time.Second, "ok Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	p := waitPod(t, ns, "bad", 30*time.Second, "bad Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 7 {
		t.Errorf("bad: %+v", p.Status.ContainerStatuses[0].State)
	}
}
