package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gatewall/gatewall/internal/local/node"
)

const echoImage = node.EchoImage + ":v20240412-v1.0.0-394-g40c666fd"

// newNamespace creates a namespace deleted when the test ends.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := env.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}) })
	return name
}

// echoDeployment is the conformance suite's echo backend.
func echoDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "echo",
					Image: echoImage,
					Ports: []corev1.ContainerPort{{ContainerPort: 3000}},
					Env: []corev1.EnvVar{
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
						{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					},
				}}},
			},
		},
	}
}

func service(ns, name, app string, typ corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{"app": app},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(3000)}},
		},
	}
}

// execPod runs script with sh in the local/exec image.
func execPod(ns, name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(2)),
			Containers: []corev1.Container{{
				Name: "main", Image: node.ExecImage, Command: []string{"sh", "-c", script},
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		if state != "" {
			last = state
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last state: %s %s", what, timeout, last, logHint())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func listPods(t *testing.T, ns, selector string) []corev1.Pod {
	t.Helper()
	pods, err := env.client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitReadyPods waits for n Running and Ready pods matching selector.
func waitReadyPods(t *testing.T, ns, selector string, n int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	eventually(t, timeout, fmt.Sprintf("%d ready pods %s in %s", n, selector, ns), func() (bool, string) {
		ready = ready[:0]
		var states []string
		for _, p := range listPods(t, ns, selector) {
			if p.Status.Phase == corev1.PodRunning && isReady(&p) && p.DeletionTimestamp == nil {
				ready = append(ready, p)
			}
			states = append(states, podState(&p))
		}
		return len(ready) == n, strings.Join(states, "; ")
	})
	return ready
}

func waitPod(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, timeout, what, func() (bool, string) {
		p, err := env.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pod = p
		return cond(p), podState(p)
	})
	return pod
}

func podState(p *corev1.Pod) string {
	s := fmt.Sprintf("%s phase=%s ready=%v ip=%s", p.Name, p.Status.Phase, isReady(p), p.Status.PodIP)
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf(" %s:waiting(%s: %s)", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		case c.State.Running != nil:
			s += fmt.Sprintf(" %s:running(restarts=%d)", c.Name, c.RestartCount)
		case c.State.Terminated != nil:
			s += fmt.Sprintf(" %s:terminated(%d)", c.Name, c.State.Terminated.ExitCode)
		}
	}
	return s
}

// sliceIPs lists the ready endpoint addresses of a Service's EndpointSlices.
func sliceIPs(t *testing.T, ns, svc string) []string {
	t.Helper()
	slices, err := env.client.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		t.Fatal(err)
	}
	var ips []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ips = append(ips, e.Addresses...)
			}
		}
	}
	return ips
}

// httpGet fetches url and returns the body.
func httpGet(url string) (string, error) {
	// No keep-alive: every request is a new connection, so that the load
	// balancer's round robin shows.
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}

// podLogs reads a container's log through the API server.
func podLogs(t *testing.T, ns, pod string, opts *corev1.PodLogOptions) (string, error) {
	t.Helper()
	b, err := env.client.CoreV1().Pods(ns).GetLogs(pod, opts).DoRaw(context.Background())
	return string(b), err
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
