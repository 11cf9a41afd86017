package local

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gatewall/gatewall/internal/local/node"
)

const nginxConf = `worker_processes 1;
pid /var/run/nginx/nginx.pid;
error_log stderr notice;
events {}
http {
  access_log off;
  client_body_temp_path /var/cache/nginx/client_temp;
  proxy_temp_path /var/cache/nginx/proxy_temp;
  fastcgi_temp_path /var/cache/nginx/fastcgi_temp;
  uwsgi_temp_path /var/cache/nginx/uwsgi_temp;
  scgi_temp_path /var/cache/nginx/scgi_temp;
  server {
    listen 8080;
    location = /healthz { return 200 "ok\n"; }
    location / { proxy_pass http://%s:3000; }
  }
}
`

// TestDataPlaneStylePod runs what the Gatewall data-plane container needs:
// NGINX with /etc/nginx and its run, cache and log directories mounted from
// the pod's volumes in a private mount namespace, a private PID namespace,
// the container ID in mountinfo, and NGINX proxying to a backend pod IP,
// reached from the host through a LoadBalancer Service.
func TestDataPlaneStylePod(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "dataplane")
	if _, err := env.client.AppsV1().Deployments(ns).Create(ctx, echoDeployment(ns, "echo", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	backend := waitReadyPods(t, ns, "app=echo", 1, 60*time.Second)[0]
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nginx-conf"},
		Data:       map[string]string{"nginx.conf": fmt.Sprintf(nginxConf, backend.Status.PodIP)},
	}
	if _, err := env.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	emptyDir := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	mounts := []corev1.VolumeMount{
		{Name: "nginx-conf", MountPath: "/etc/nginx"},
		{Name: "nginx-run", MountPath: "/var/run/nginx"},
		{Name: "nginx-cache", MountPath: "/var/cache/nginx"},
		{Name: "nginx-log", MountPath: "/var/log/nginx"},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gateway", Labels: map[string]string{"app": "gateway"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(2)),
			Volumes: []corev1.Volume{
				{Name: "nginx-conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "nginx-conf"}}}},
				emptyDir("nginx-run"), emptyDir("nginx-cache"), emptyDir("nginx-log"),
			},
			Containers: []corev1.Container{
				{
					Name: "nginx", Image: node.ExecImage,
					Command:      []string{"nginx", "-g", "daemon off;"},
					Ports:        []corev1.ContainerPort{{ContainerPort: 8080}},
					VolumeMounts: mounts,
					ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}},
					LivenessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
						Exec: &corev1.ExecAction{Command: []string{"nginx", "-t", "-q"}}}},
				},
				{
					Name: "inspect", Image: node.ExecImage, VolumeMounts: mounts,
					Command: []string{"sh", "-c", `echo "pid1=$(cat /proc/1/comm) procs=$(ls /proc | grep -c '^[0-9]')"; ` +
						`echo "hostname=$(hostname)"; echo "etc-nginx=$(ls /etc/nginx | tr '\n' ' ')"; ` +
						`echo "id=$(grep -oE '/[0-9a-f]{64} ' /proc/self/mountinfo | head -1)"; exec sleep 1000`},
				},
			},
		},
	}
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gateway"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "gateway"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gw := waitPod(t, ns, "gateway", 30*time.Second, "gateway ready", func(p *corev1.Pod) bool { return isReady(p) })

	var inspect string
	eventually(t, 10*time.Second, "inspect output", func() (bool, string) {
		got, err := podLogs(t, ns, "gateway", &corev1.PodLogOptions{Container: "inspect"})
		inspect = got
		return err == nil && strings.Count(got, "\n") == 4, got
	})
	var inspectID string
	for _, cs := range gw.Status.ContainerStatuses {
		if cs.Name == "inspect" {
			inspectID = strings.TrimPrefix(cs.ContainerID, "local://")
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^pid1=sh procs=[1-4]$`),
		regexp.MustCompile(`(?m)^hostname=gateway$`),
		regexp.MustCompile(`(?m)^etc-nginx=nginx.conf $`),
		regexp.MustCompile(`(?m)^id=/` + inspectID + ` $`),
	} {
		if !want.MatchString(inspect) {
			t.Errorf("inspect container: want %s in:\n%s", want, inspect)
		}
	}

	r, err := getEcho("http://" + gw.Status.PodIP + ":8080/via-nginx")
	if err != nil || r.Pod != backend.Name || r.Path != "/via-nginx" {
		t.Fatalf("through NGINX at the pod IP: %+v, %v", r, err)
	}
	var lbAddr string
	eventually(t, 20*time.Second, "through the gateway's LoadBalancer address", func() (bool, string) {
		a, ok := env.node.LoadBalancerAddress(ns, "gateway")
		if !ok {
			return false, "no address"
		}
		lbAddr = a.String()
		r, err := getEcho("http://" + lbAddr + "/via-lb")
		if err != nil {
			return false, err.Error()
		}
		return r.Pod == backend.Name && r.Path == "/via-lb", fmt.Sprint(r)
	})
	// The liveness probe (nginx -t inside the container's namespaces) keeps
	// passing: no restarts.
	time.Sleep(2 * time.Second)
	p, err := env.client.CoreV1().Pods(ns).Get(ctx, "gateway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount != 0 {
			t.Errorf("container %s restarted %d times: %+v", cs.Name, cs.RestartCount, cs.LastTerminationState)
		}
	}
}
