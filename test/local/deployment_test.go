package local

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// echoResponse is the part of echo-basic's answer the tests read.
type echoResponse struct {
	Pod       string `json:"pod"`
	Namespace string `json:"namespace"`
	Path      string `json:"path"`
}

func getEcho(url string) (echoResponse, error) {
	body, err := httpGet(url)
	if err != nil {
		return echoResponse{}, err
	}
	var r echoResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return r, fmt.Errorf("decoding %q: %w", body, err)
	}
	return r, nil
}

func TestDeploymentPodsServeAndBecomeEndpoints(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "deploy")
	start := time.Now()
	if _, err := env.client.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns, "echo", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.CoreV1().Services(ns).Create(ctx, service(ns, "echo", "echo", corev1.ServiceTypeClusterIP), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitReadyPods(t, ns, "app=echo", 2, 60*time.Second)
	readyAfter := time.Since(start)

	var ips []string
	for _, p := range pods {
		if p.Status.PodIP == "" || p.Status.HostIP != env.node.IP().String() || p.Spec.NodeName != env.node.Name() {
			t.Errorf("pod %s: podIP %q hostIP %q node %q", p.Name, p.Status.PodIP, p.Status.HostIP, p.Spec.NodeName)
		}
		ips = append(ips, p.Status.PodIP)
		cs := p.Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Running == nil || !cs[0].Ready || cs[0].RestartCount != 0 || cs[0].ContainerID == "" {
			t.Errorf("pod %s container status: %+v", p.Name, cs)
		}
	}
	slices.Sort(ips)
	eventually(t, 30*time.Second, "EndpointSlice with both pod IPs", func() (bool, string) {
		got := sliceIPs(t, ns, "echo")
		slices.Sort(got)
		return slices.Equal(got, ips), fmt.Sprint(got)
	})
	t.Logf("deployment of 2: Ready after %s, EndpointSlice after %s", readyAfter.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	for _, p := range pods {
		r, err := getEcho(fmt.Sprintf("http://%s:3000/hello", p.Status.PodIP))
		if err != nil {
			t.Fatalf("GET pod %s: %v", p.Name, err)
		}
		if r.Pod != p.Name || r.Namespace != ns || r.Path != "/hello" {
			t.Errorf("pod %s answered %+v", p.Name, r)
		}
	}
}
