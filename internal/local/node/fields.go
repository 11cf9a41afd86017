package node

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// podFacts are what the downward API can expose beyond the pod object.
type podFacts struct {
	podIP       string
	hostIP      string
	allocatable corev1.ResourceList // the node's, for unset limits
}

// podField resolves a downward-API field path.
func podField(pod *corev1.Pod, facts podFacts, path string) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return facts.podIP, nil
	case "status.hostIP", "status.hostIPs":
		return facts.hostIP, nil
	}
	return "", fmt.Errorf("unsupported downward API field %q", path)
}

// subscript parses `prefix['key']`.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

// formatMap renders labels or annotations as the kubelet does: sorted
// key="quoted value" lines.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, k+"="+strconv.Quote(m[k]))
	}
	return strings.Join(lines, "\n")
}

// resourceField resolves a resourceFieldRef against the container's
// resources; an unset limit is the node's allocatable amount, as on a node.
func resourceField(c *corev1.Container, facts podFacts, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resource field %q", ref.Resource)
	}
	res := corev1.ResourceName(name)
	var q resource.Quantity
	var set bool
	switch kind {
	case "limits":
		q, set = c.Resources.Limits[res]
	case "requests":
		q, set = c.Resources.Requests[res]
		if !set && res != corev1.ResourceCPU && res != corev1.ResourceMemory {
			return "", fmt.Errorf("unsupported resource field %q", ref.Resource)
		}
		if !set {
			return "0", nil
		}
	default:
		return "", fmt.Errorf("unsupported resource field %q", ref.Resource)
	}
	if !set {
		q, set = facts.allocatable[res]
		if !set {
			return "", fmt.Errorf("node has no allocatable %s", res)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	return strconv.FormatInt(int64(math.Ceil(q.AsApproximateFloat64()/divisor.AsApproximateFloat64())), 10), nil
}
