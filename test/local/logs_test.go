package local

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodLogsThroughTheAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "logs")
	pod := execPod(ns, "talker", "echo first; sleep 0.2; echo to-stderr >&2; sleep 2; echo second; exec sleep 1000")
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "talker", 30*time.Second, "talker running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	var all string
	eventually(t, 20*time.Second, "both lines logged", func() (bool, string) {
		got, err := podLogs(t, ns, "talker", &corev1.PodLogOptions{})
		if err != nil {
			return false, err.Error()
		}
		all = got
		return strings.Contains(got, "second"), got
	})
	// stdout and stderr are separate pipes, as in a container runtime: their
	// order is only kept because of the pause between them.
	if all != "first\nto-stderr\nsecond\n" {
		t.Errorf("logs = %q", all)
	}

	stamped, err := podLogs(t, ns, "talker", &corev1.PodLogOptions{Timestamps: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stamped), "\n")
	if len(lines) != 3 {
		t.Fatalf("timestamped logs = %q", stamped)
	}
	ts := func(line string) time.Time {
		s, _, _ := strings.Cut(line, " ")
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("line %q has no timestamp: %v", line, err)
		}
		return tm
	}
	// sinceTime has second precision: pick the second after the stderr line,
	// which is at or before "second" (logged two seconds later).
	since := metav1.NewTime(ts(lines[1]).Truncate(time.Second).Add(time.Second))
	if !ts(lines[2]).Before(since.Time) {
		got, err := podLogs(t, ns, "talker", &corev1.PodLogOptions{SinceTime: &since})
		if err != nil {
			t.Fatal(err)
		}
		if got != "second\n" {
			t.Errorf("logs since %s = %q, want only the second line", since.Time, got)
		}
	}
	tail := int64(1)
	if got, err := podLogs(t, ns, "talker", &corev1.PodLogOptions{TailLines: &tail}); err != nil || got != "second\n" {
		t.Errorf("tailLines=1: %q, %v", got, err)
	}
	if _, err := podLogs(t, ns, "talker", &corev1.PodLogOptions{Container: "nope"}); err == nil {
		t.Error("logs of a container the pod does not have: no error")
	}
}
