package local

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/local/images"
	"github.com/gatewall/gatewall/internal/localrun"
)

// kubectlObjects are a shell pod (the data-plane image has one) and an
// echo Deployment, for kubectl to work with.
var kubectlObjects = fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: kubectl-test}
---
apiVersion: v1
kind: Pod
metadata: {name: shell, namespace: kubectl-test}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: shell
    image: %s
    command: [sh, -c, 'echo shell started; exec sleep infinity']
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: kubectl-test}
spec:
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
      - name: echo
        image: %s
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        readinessProbe: {httpGet: {path: /, port: 3000}, periodSeconds: 1}
`, images.DataPlane, images.Echo)

// TestKubectl: on the local cluster, kubectl's exec, logs and port-forward
// work (the API server reaches the kubelet), and pods resolve Services by
// name through the cluster DNS.
func TestKubectl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	apply := kubectl(ctx, "apply", "-f", "-")
	apply.Stdin = strings.NewReader(kubectlObjects)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = kubectl(context.Background(), "delete", "namespace", "kubectl-test", "--wait=false").Run() })
	kubectlOutput(t, "-n", "kubectl-test", "wait", "--for=condition=Ready", "pod/shell", "--timeout=120s")
	kubectlOutput(t, "-n", "kubectl-test", "rollout", "status", "deployment/echo", "--timeout=120s")

	t.Run("exec and cluster DNS", func(t *testing.T) {
		svc := fmt.Sprintf("gatewall-agent.%s.svc.cluster.local", localrun.ManagerNamespace)
		out := kubectlOutput(t, "-n", "kubectl-test", "exec", "shell", "--", "getent", "hosts", svc)
		ip := strings.Fields(out)
		if len(ip) == 0 || net.ParseIP(ip[0]) == nil || !strings.HasPrefix(ip[0], "10.96.") {
			t.Errorf("getent hosts %s in a pod: %q, want the Service's cluster IP", svc, out)
		}
	})
	t.Run("logs", func(t *testing.T) {
		if out := kubectlOutput(t, "-n", "kubectl-test", "logs", "shell"); !strings.Contains(out, "shell started") {
			t.Errorf("kubectl logs: %q", out)
		}
	})
	t.Run("port-forward", func(t *testing.T) {
		pf := kubectl(ctx, "-n", "kubectl-test", "port-forward", "deployment/echo", ":3000")
		stdout, err := pf.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := pf.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = pf.Process.Kill(); _ = pf.Wait() }()
		// "Forwarding from 127.0.0.1:PORT -> 3000"
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatalf("kubectl port-forward: %v (%q)", err, line)
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[2], "127.0.0.1:") {
			t.Fatalf("kubectl port-forward said %q", line)
		}
		code, body, err := get(f[2], "echo")
		if err != nil || code != 200 || !strings.Contains(body, `"namespace": "kubectl-test"`) {
			t.Errorf("GET through the port-forward: %d %v %.200s", code, err, body)
		}
	})
}
