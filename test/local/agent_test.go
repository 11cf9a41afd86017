package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const agentConf = `log:
  level: debug
command:
  server:
    host: %s
    port: 9
    type: grpc
allowed_directories: ["/etc/nginx", "/var/run/nginx", "/var/log/nginx"]
`

// TestNginxAgentSeesItsOwnContainer runs NGINX and nginx-agent together as
// the data-plane container does and checks the agent's view: it derives its
// resource ID from the container ID in mountinfo and sees only its own NGINX
// processes (private PID namespace), parsing /etc/nginx from the pod's volume.
func TestNginxAgentSeesItsOwnContainer(t *testing.T) {
	if _, err := os.Stat(filepath.Join(env.binDir, "nginx-agent")); err != nil {
		t.Fatal("bin/nginx-agent not found: run hack/nginx-agent.sh to build it")
	}
	ctx := context.Background()
	ns := newNamespace(t, "agent")
	for name, data := range map[string]map[string]string{
		"nginx-conf": {"nginx.conf": fmt.Sprintf(nginxConf, "127.0.0.1")},
		"agent-conf": {"nginx-agent.conf": fmt.Sprintf(agentConf, env.node.IP())},
	} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
		if _, err := env.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	configMap := func(vol, name string) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}
	}
	emptyDir := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	pod := execPod(ns, "dataplane", "nginx && PATH=$PATH:"+env.binDir+" exec nginx-agent")
	pod.Spec.Volumes = []corev1.Volume{configMap("conf", "nginx-conf"), configMap("agent", "agent-conf"),
		emptyDir("run"), emptyDir("cache"), emptyDir("log"), emptyDir("agent-log")}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "conf", MountPath: "/etc/nginx"}, {Name: "agent", MountPath: "/etc/nginx-agent"},
		{Name: "run", MountPath: "/var/run/nginx"}, {Name: "cache", MountPath: "/var/cache/nginx"},
		{Name: "log", MountPath: "/var/log/nginx"}, {Name: "agent-log", MountPath: "/var/log/nginx-agent"},
	}
	// A decoy NGINX in another pod, which the agent must not see.
	decoy := execPod(ns, "decoy", "exec nginx -g 'daemon off;'")
	decoy.Spec.Volumes = pod.Spec.Volumes
	decoy.Spec.Containers[0].VolumeMounts = pod.Spec.Containers[0].VolumeMounts
	for _, p := range []*corev1.Pod{decoy, pod} {
		if _, err := env.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPod(t, ns, "decoy", 30*time.Second, "decoy running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	p := waitPod(t, ns, "dataplane", 30*time.Second, "dataplane running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning
	})
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "local://")
	resourceID := uuid.NewMD5(uuid.NameSpaceDNS, []byte(id)).String()
	processes := regexp.MustCompile(`msg="NGINX processes changed" processes="(.*?)" correlation_id`)
	var logs string
	eventually(t, 30*time.Second, "agent reported its resource and NGINX processes", func() (bool, string) {
		got, err := podLogs(t, ns, "dataplane", &corev1.PodLogOptions{})
		logs = got
		return err == nil && strings.Contains(got, `resource_id:\"`+resourceID+`\"`) && processes.MatchString(got), lastLines(got, 5)
	})
	seen := processes.FindStringSubmatch(logs)[1]
	// Its own master and one worker; the decoy's (and any on the host) are
	// in other PID namespaces.
	if n := strings.Count(seen, `\"name\":\"nginx\"`); n != 2 || !strings.Contains(seen, `nginx: master process nginx`) {
		t.Errorf("agent saw %d NGINX processes: %s", n, seen)
	}
	if !strings.Contains(logs, `msg="Parsing NGINX config" file_path=/etc/nginx/nginx.conf`) {
		t.Error("agent did not parse /etc/nginx/nginx.conf")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
