package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestContainerMountsOrderParentsFirstAndCreateNestedTargetsInTheParent(t *testing.T) {
	root := t.TempDir()
	host := func(p string) string { return filepath.Join(root, "host", p) }
	vols := map[string]string{"run": filepath.Join(root, "vol-run"), "sec": filepath.Join(root, "vol-sec")}
	for _, d := range vols {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hosts := filepath.Join(root, "hosts")
	if err := os.WriteFile(hosts, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := filepath.Join(root, "containers", strings.Repeat("a", 64))
	if err := os.MkdirAll(id, 0o755); err != nil {
		t.Fatal(err)
	}
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "sec", MountPath: host("var/run/secrets/token"), ReadOnly: true},
		{Name: "run", MountPath: host("var/run")},
	}}
	mounts, err := containerMounts(c, vols, nil, map[string]string{"/etc/hosts": hosts}, id)
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for i, m := range mounts {
		index[m.target] = i
	}
	if index[host("var/run")] > index[host("var/run/secrets/token")] {
		t.Fatalf("parent mount after the nested one: %+v", mounts)
	}
	created, err := ensureMountPoints(mounts)
	if err != nil {
		t.Fatal(err)
	}
	// The parent's target is made on the host; the nested one inside the
	// parent volume, where the container will look for it.
	if len(created) != 1 || created[0] != host("var/run") {
		t.Errorf("created on host: %v", created)
	}
	if _, err := os.Stat(filepath.Join(vols["run"], "secrets", "token")); err != nil {
		t.Errorf("nested mount point not created in the parent volume: %v", err)
	}
	if _, err := os.Stat(host("var/run/secrets")); err == nil {
		t.Error("nested mount point created on the host")
	}
	for _, m := range mounts {
		if m.target == host("var/run/secrets/token") && !m.readOnly {
			t.Error("readOnly lost")
		}
	}

	bad := &corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "run", MountPath: "/x", SubPath: "../escape"}}}
	if _, err := containerMounts(bad, vols, nil, map[string]string{"/etc/hosts": hosts}, id); err == nil {
		t.Error("subPath escaping the volume accepted")
	}
}

func TestHostsFileHasPodAliasesAndExtras(t *testing.T) {
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = "web-0", "ns"
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"a.example", "b.example"}}}
	got := string(hostsFile(pod, "10.244.0.9", []string{"10.244.0.1\tcontrol-plane.local"}))
	for _, want := range []string{"127.0.0.1\tlocalhost\n", "10.244.0.9\tweb-0\n", "10.1.2.3\ta.example\tb.example\n", "10.244.0.1\tcontrol-plane.local\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("hosts file lacks %q:\n%s", want, got)
		}
	}
}
