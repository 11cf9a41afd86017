package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gatewall/gatewall/internal/local/cluster"
	"github.com/gatewall/gatewall/internal/local/loadbalancer"
	"github.com/gatewall/gatewall/internal/local/node"
	"github.com/gatewall/gatewall/internal/local/podnet"
)

// TestStopLeavesNothingBehind runs a cluster and node of its own (so that
// it can stop them mid-run) with pods and a LoadBalancer Service, stops
// them, and looks for anything left: processes, namespaces, links, routes,
// mounts, listeners.
func TestStopLeavesNothingBehind(t *testing.T) {
	ctx := context.Background()
	work := filepath.Join(env.workDir, "stop")
	clusterDir := filepath.Join(work, "cluster")
	c, err := cluster.Start(ctx, cluster.Options{BinDir: env.binDir, WorkDir: clusterDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	n, err := node.Start(ctx, c.Config(), node.Options{
		Name: "stop-node", StateDir: filepath.Join(work, "node"), Images: node.DefaultImages(env.binDir),
		KubeletCA:    c.KubeletCA(),
		Network:      podnet.Options{Prefix: "gwls", CIDR: "10.248.0.0/24"},
		LoadBalancer: loadbalancer.Options{CIDR: "127.0.4.0/24"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	pod := execPod("default", "marker", "exec sleep 4242")
	pod.Labels = map[string]string{"app": "marker"}
	pod.Spec.Containers[0].Ports = nil
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := service("default", "marker", "marker", corev1.ServiceTypeLoadBalancer)
	if _, err := client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var lbAddr string
	eventually(t, 30*time.Second, "marker pod running with a load balancer", func() (bool, string) {
		p, err := client.CoreV1().Pods("default").Get(ctx, "marker", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		a, ok := n.LoadBalancerAddress("default", "marker")
		lbAddr = a.String()
		return ok && isReady(p), podState(p)
	})
	if len(processesWith("sleep 4242")) != 1 {
		t.Fatalf("marker process not found")
	}

	if err := n.Stop(); err != nil {
		t.Errorf("node stop: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("cluster stop: %v", err)
	}
	if left := leftovers("gwls", "10.248.0.0/24"); len(filterOut(left, "process")) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if p := processesWith("sleep 4242"); len(p) > 0 {
		t.Errorf("pod process still running: %v", p)
	}
	if p := processesWith(clusterDir); len(p) > 0 {
		t.Errorf("control-plane processes still running: %v", p)
	}
	if _, err := httpGet("http://" + lbAddr + ":80/"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("load balancer address %s still accepts connections: %v", lbAddr, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(work, "node", "pods")); len(entries) > 0 {
		t.Errorf("pod files left: %v", entries)
	}
}

// processesWith lists processes whose command line contains s.
func processesWith(s string) []string {
	var found []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || len(cmd) == 0 {
			continue
		}
		line := strings.ReplaceAll(string(cmd), "\x00", " ")
		if strings.Contains(line, s) && p.Name() != "self" && p.Name() != "thread-self" {
			found = append(found, p.Name()+": "+line)
		}
	}
	return found
}

// filterOut drops entries of a kind: child processes of this test process
// belong to the shared node, which keeps running.
func filterOut(entries []string, kind string) []string {
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e, kind+" ") {
			out = append(out, e)
		}
	}
	return out
}
