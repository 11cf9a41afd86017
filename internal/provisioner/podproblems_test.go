package provisioner

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(name string, phase corev1.PodPhase, conds []corev1.PodCondition, containers ...corev1.ContainerStatus) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.PodStatus{Phase: phase, Conditions: conds, ContainerStatuses: containers}}
}

// TestPodProblems: each state of a pod that keeps the data plane from
// serving is named with what the cluster says of it; the same problem of
// several pods once; healthy pods and pods on their way out say nothing.
func TestPodProblems(t *testing.T) {
	unschedulable := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."}}
	pullFails := corev1.ContainerStatus{Name: "nginx", Image: "example.com/nginx:nope",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "example.com/nginx:nope"`}}}
	crashes := corev1.ContainerStatus{Name: "nginx", RestartCount: 5,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "nginx: [emerg] bind() failed"}}}
	notReady := corev1.ContainerStatus{Name: "nginx", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	ready := corev1.ContainerStatus{Name: "nginx", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	gone := pod("gone", corev1.PodPending, unschedulable)
	gone.DeletionTimestamp = &metav1.Time{}
	for _, c := range []struct {
		name string
		pods []corev1.Pod
		want []string // each in the message; none: ""
	}{
		{"no pods", nil, nil},
		{"ready", []corev1.Pod{pod("a", corev1.PodRunning, nil, ready)}, nil},
		{"terminating", []corev1.Pod{gone}, nil},
		{"unschedulable, twice", []corev1.Pod{pod("a", corev1.PodPending, unschedulable), pod("b", corev1.PodPending, unschedulable)},
			[]string{"pod a and 1 more: cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.", "(Unschedulable)"}},
		{"image", []corev1.Pod{pod("a", corev1.PodPending, nil, pullFails)},
			[]string{"pod a: container nginx cannot pull image example.com/nginx:nope", "(ImagePullBackOff)"}},
		{"crash loop", []corev1.Pod{pod("a", corev1.PodRunning, nil, crashes)},
			[]string{"container nginx keeps crashing (5 restarts, last exit code 1 (Error): nginx: [emerg] bind() failed)"}},
		{"not ready", []corev1.Pod{pod("a", corev1.PodRunning, nil, notReady), pod("b", corev1.PodRunning, nil, ready)},
			[]string{"pod a: container nginx is running but not ready"}},
	} {
		got := PodProblems(c.pods)
		if len(c.want) == 0 && got != "" {
			t.Errorf("%s: %q, want nothing", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", c.name, got, w)
			}
		}
	}
	long := corev1.ContainerStatus{Name: "nginx", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
		Reason: "ErrImagePull", Message: strings.Repeat("x", 10000)}}}
	if got := PodProblems([]corev1.Pod{pod("a", corev1.PodPending, nil, long)}); len(got) > 400 {
		t.Errorf("a message from the cluster is not bounded: %d bytes", len(got))
	}
}
