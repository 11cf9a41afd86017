package local

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestReadinessFollowsProbesAndLivenessRestarts(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "probes")
	// Ready only once the exec probe finds the file written after 2s.
	slow := execPod(ns, "slow", "sleep 2; touch /var/lib/gatewall-local-test/data/ready; exec sleep 1000")
	slow.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	slow.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/gatewall-local-test/data"}}
	slow.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
		Exec: &corev1.ExecAction{Command: []string{"test", "-e", "/var/lib/gatewall-local-test/data/ready"}}}}
	// Declares a port it never opens: never Ready, and the TCP liveness
	// probe fails, so it is restarted.
	dead := execPod(ns, "dead", "exec sleep 1000")
	dead.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9999}}
	dead.Spec.Containers[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 2, ProbeHandler: corev1.ProbeHandler{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9999)}}}
	for _, p := range []*corev1.Pod{slow, dead} {
		if _, err := env.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, ns, "slow", 20*time.Second, "slow running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if isReady(p) {
		t.Fatal("slow is Ready before its readiness probe passed")
	}
	runningAt := time.Now()
	waitPod(t, ns, "slow", 20*time.Second, "slow ready", isReady)
	if d := time.Since(runningAt); d < time.Second {
		t.Errorf("slow became Ready %s after Running; its probe cannot pass before 2s", d)
	}

	p = waitPod(t, ns, "dead", 30*time.Second, "dead restarted by its liveness probe", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1
	})
	if isReady(p) {
		t.Error("dead is Ready although its declared port never accepted a connection")
	}
	last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	// sleep as PID 1 ignores SIGTERM: it is killed after the grace period.
	if last == nil || last.ExitCode != 137 {
		t.Errorf("lastState after the liveness kill: %+v", last)
	}
}
