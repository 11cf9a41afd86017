package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/local/node"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestDataPlaneReadinessProbe runs real NGINX with the data-plane image's
// bootstrap configuration under the readiness probe the provisioner gives
// the NGINX container: the pod is not Ready on the bootstrap configuration,
// and becomes Ready once NGINX reloads into one that serves the Gateway's
// listener ports, as it does when the agent applies Gatewall's push. The
// local node runs the exec probe in the container's namespaces, as a
// kubelet does.
func TestDataPlaneReadinessProbe(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "readiness")
	bootstrap, err := os.ReadFile(filepath.Join(repoRoot(), "build", "dataplane", "nginx-bootstrap.conf"))
	if err != nil {
		t.Fatal(err)
	}
	served := strings.Replace(string(bootstrap), "http {", "http {\n    server { listen 80; listen 8443; return 200; }", 1)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "confs"},
		Data:       map[string]string{"bootstrap.conf": string(bootstrap), "served.conf": served},
	}
	if _, err := env.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	objs := provisioner.Objects(provisioner.Params{
		Gateway: &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw", UID: "uid-1"},
			Spec:       gatewayv1.GatewaySpec{GatewayClassName: "nginx"},
		},
		NginxProxy: &v1alpha2.NginxProxySpec{}, Ports: []int32{8443, 80}, Images: provisioner.DefaultImages,
	})
	var probe *corev1.Probe
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			probe = d.Spec.Template.Spec.Containers[0].ReadinessProbe
		}
	}
	if probe == nil {
		t.Fatal("the provisioned NGINX container has no readiness probe")
	}

	// NGINX starts on the bootstrap configuration, and reloads into the
	// served one after a while (the agent's push).
	confs := mountRoot + "/readiness-confs"
	const pushAfter = 8 // seconds
	script := "cp " + confs + "/bootstrap.conf /etc/nginx/nginx.conf && nginx -e stderr -c /etc/nginx/nginx.conf && " +
		"sleep 8 && cp " + confs + "/served.conf /etc/nginx/nginx.conf && nginx -e stderr -c /etc/nginx/nginx.conf -s reload && " +
		"echo reloaded && exec sleep 1000"
	pod := execPod(ns, "dataplane", script)
	emptyDir := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "confs", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "confs"}}}},
		emptyDir("nginx-conf"), emptyDir("nginx-run"), emptyDir("nginx-cache"), emptyDir("nginx-log"),
	}
	c := &pod.Spec.Containers[0]
	c.Image = node.ExecImage
	c.VolumeMounts = []corev1.VolumeMount{
		{Name: "confs", MountPath: confs}, {Name: "nginx-conf", MountPath: "/etc/nginx"},
		{Name: "nginx-run", MountPath: "/var/run/nginx"}, {Name: "nginx-cache", MountPath: "/var/cache/nginx"},
		{Name: "nginx-log", MountPath: "/var/log/nginx"},
	}
	c.ReadinessProbe = probe
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "dataplane", 30*time.Second, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	// Several probe periods on the bootstrap configuration: never Ready.
	for deadline := time.Now().Add(pushAfter * time.Second / 2); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		p, err := env.client.CoreV1().Pods(ns).Get(ctx, "dataplane", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if isReady(p) {
			logs, _ := podLogs(t, ns, "dataplane", &corev1.PodLogOptions{})
			t.Fatalf("Ready while NGINX runs the bootstrap configuration %s\n%s", logHint(), logs)
		}
	}
	waitPod(t, ns, "dataplane", 30*time.Second, "Ready once NGINX serves the listener ports", isReady)
	if logs, _ := podLogs(t, ns, "dataplane", &corev1.PodLogOptions{}); !strings.Contains(logs, "reloaded") {
		t.Fatalf("Ready before NGINX reloaded into the served configuration:\n%s", logs)
	}
}
