package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestScaleAndFootprint measures how long a Deployment of 20 echo pods
// takes to become Ready and to appear in its EndpointSlices, and the memory
// of the control plane, the node and the pods.
func TestScaleAndFootprint(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "scale")
	const replicas = 20
	start := time.Now()
	if _, err := env.client.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns, "echo", replicas), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := service(ns, "echo", "echo", "")
	if _, err := env.client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReadyPods(t, ns, "app=echo", replicas, 120*time.Second)
	ready := time.Since(start)
	eventually(t, 60*time.Second, "EndpointSlices with every pod", func() (bool, string) {
		got := sliceIPs(t, ns, "echo")
		return len(got) == replicas, fmt.Sprint(len(got))
	})
	slices := time.Since(start)

	self := strconv.Itoa(os.Getpid())
	controlPlane, pods := 0, 0
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		switch {
		case bytes.Contains(cmd, []byte(filepath.Join(env.workDir, "cluster")+"/")):
			controlPlane += rssKiB(p.Name())
		case parentOf(p.Name()) == self:
			pods += rssKiB(p.Name())
		}
	}
	node := rssKiB(self)
	t.Logf("%d echo pods: Ready after %s, in EndpointSlices after %s", replicas, ready.Round(time.Millisecond), slices.Round(time.Millisecond))
	t.Logf("RSS: control plane %d MiB, node (this test process) %d MiB, pod processes %d MiB",
		controlPlane/1024, node/1024, pods/1024)
	if controlPlane == 0 || pods == 0 {
		t.Errorf("measured nothing: control plane %d KiB, pods %d KiB", controlPlane, pods)
	}
}

func rssKiB(pid string) int {
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func parentOf(pid string) string {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
		return f[1]
	}
	return ""
}
