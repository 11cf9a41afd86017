package provisioner

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PodProblems says, from the data-plane pods' own state, why the data plane
// is not serving: pods the scheduler cannot place (with its message: "0/1
// nodes are available: 1 Insufficient cpu"), images that cannot be pulled,
// containers that keep crashing (with their last termination), containers
// not ready. Each different problem once, naming one of the pods that have
// it and how many more; "" when no pod has one. A user reading the
// Gateway's Programmed condition (kubectl get gateway) can act on it
// without looking at pods and events.
func PodProblems(pods []corev1.Pod) string {
	type seen struct {
		pod   string
		count int
	}
	problems := map[string]*seen{}
	var order []string
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		for _, problem := range podProblems(p) {
			if s := problems[problem]; s != nil {
				s.count++
				continue
			}
			problems[problem] = &seen{pod: p.Name, count: 1}
			order = append(order, problem)
		}
	}
	sort.Strings(order)
	out := make([]string, 0, len(order))
	for _, problem := range order {
		s := problems[problem]
		who := "pod " + s.pod
		if s.count > 1 {
			who = fmt.Sprintf("pod %s and %d more", s.pod, s.count-1)
		}
		out = append(out, who+": "+problem)
	}
	return strings.Join(out, "; ")
}

// maxProblemMessage bounds what of a message from the cluster a problem
// quotes (a crashing container's termination message is its own to write).
const maxProblemMessage = 256

// podProblems are one pod's problems, most telling first.
func podProblems(p *corev1.Pod) []string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return []string{fmt.Sprintf("cannot be scheduled: %s (%s)", clip(c.Message), c.Reason)}
		}
	}
	var out []string
	for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
				out = append(out, fmt.Sprintf("container %s cannot pull image %s: %s (%s)", cs.Name, cs.Image, clip(w.Message), w.Reason))
				continue
			case "CrashLoopBackOff":
				last := ""
				if t := cs.LastTerminationState.Terminated; t != nil {
					last = fmt.Sprintf(", last exit code %d (%s)", t.ExitCode, t.Reason)
					if t.Message != "" {
						last += ": " + clip(t.Message)
					}
				}
				out = append(out, fmt.Sprintf("container %s keeps crashing (%d restarts%s)", cs.Name, cs.RestartCount, last))
				continue
			case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				out = append(out, fmt.Sprintf("container %s cannot start: %s (%s)", cs.Name, clip(w.Message), w.Reason))
				continue
			}
		}
		if cs.State.Running != nil && !cs.Ready && p.Status.Phase == corev1.PodRunning {
			out = append(out, fmt.Sprintf("container %s is running but not ready (its readiness probe fails)", cs.Name))
		}
	}
	return out
}

// clip bounds a message from the cluster.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxProblemMessage {
		return s
	}
	return s[:maxProblemMessage] + "…"
}
