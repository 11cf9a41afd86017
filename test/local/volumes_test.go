package local

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodWaitsForItsSecret(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "secret")
	pod := execPod(ns, "reader", "stat -L -c '%a %n' /var/lib/gatewall-local-test/creds/renamed.txt; cat /var/lib/gatewall-local-test/creds/renamed.txt; echo; echo env=$FROM_SECRET; exec sleep 1000")
	pod.Spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  "later",
		DefaultMode: ptr(int32(0o600)),
		Items:       []corev1.KeyToPath{{Key: "password", Path: "renamed.txt"}},
	}}}}
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = []corev1.VolumeMount{{Name: "creds", MountPath: "/var/lib/gatewall-local-test/creds", ReadOnly: true}}
	c.Env = []corev1.EnvVar{{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "later"}, Key: "user"}}}}
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ns, "reader", 30*time.Second, "reader waiting for its volume", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && strings.Contains(cs[0].State.Waiting.Message, `secret "later"`)
	})
	if p.Status.Phase != corev1.PodPending || p.Status.ContainerStatuses[0].State.Waiting.Reason != "ContainerCreating" {
		t.Fatalf("waiting pod: %s", podState(p))
	}
	time.Sleep(3 * time.Second)
	p, err := env.client.CoreV1().Pods(ns).Get(ctx, "reader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodPending {
		t.Fatalf("pod left Pending without its Secret: %s", podState(p))
	}

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"},
		StringData: map[string]string{"password": "s3cret", "user": "alice"},
	}
	if _, err := env.client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ns, "reader", 30*time.Second, "reader running once the Secret exists", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && isReady(p)
	})
	eventually(t, 10*time.Second, "reader printed the secret", func() (bool, string) {
		got, err := podLogs(t, ns, "reader", &corev1.PodLogOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got == "600 /var/lib/gatewall-local-test/creds/renamed.txt\ns3cret\nenv=alice\n", got
	})
}

func TestConfigMapDownwardAPIAndEnvExpansion(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "config")
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"},
		Data:       map[string]string{"greeting": "hello", "a.conf": "x=1"},
	}
	if _, err := env.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := execPod(ns, "cfg", `echo "$MSG"; cat /var/lib/gatewall-local-test/cfg/a.conf; echo; cat /var/lib/gatewall-local-test/info/labels; echo; cat /var/lib/gatewall-local-test/info/name; echo; echo "$@"; exec sleep 1000`)
	pod.Labels = map[string]string{"tier": "test"}
	c := &pod.Spec.Containers[0]
	c.Command = append(c.Command, "sh", "$(GREETING)-arg", "$$(GREETING)")
	c.EnvFrom = []corev1.EnvFromSource{{Prefix: "", ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
	c.Env = []corev1.EnvVar{
		{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "greeting"}}},
		{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "MSG", Value: "$(GREETING) from $(IP)"},
	}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		}}}},
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/var/lib/gatewall-local-test/cfg"}, {Name: "info", MountPath: "/var/lib/gatewall-local-test/info"}}
	if _, err := env.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ns, "cfg", 30*time.Second, "cfg running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	want := "hello from " + p.Status.PodIP + "\nx=1\ntier=\"test\"\ncfg\nhello-arg $(GREETING)\n"
	eventually(t, 10*time.Second, "cfg printed its configuration", func() (bool, string) {
		got, err := podLogs(t, ns, "cfg", &corev1.PodLogOptions{})
		return err == nil && got == want, got
	})
}
