package config

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestWorkerProcessesFollowTheCPULimit: NGINX runs one worker per CPU of
// its container's limit, rounded up (2 by default), so that its memory,
// which grows with every worker, stays within the container's limit;
// without a CPU limit, one per CPU of the node (auto).
func TestWorkerProcessesFollowTheCPULimit(t *testing.T) {
	limits := func(l corev1.ResourceList) *v1alpha2.NginxProxySpec {
		return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Container: &v1alpha2.ContainerSpec{Resources: &corev1.ResourceRequirements{Limits: l}}}}}
	}
	for _, c := range []struct {
		name string
		np   *v1alpha2.NginxProxySpec
		want string
	}{
		{"no NginxProxy", nil, "2"},
		{"the default limit", &v1alpha2.NginxProxySpec{}, "2"},
		{"a fraction of a CPU", limits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}), "1"},
		{"rounded up", limits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m")}), "3"},
		{"eight", limits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}), "8"},
		{"no CPU limit", limits(corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}), "auto"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{Main: mainSettings(c.np)}
			if got := directiveArg(cfg.mainConf(), "worker_processes"); got != c.want {
				t.Errorf("worker_processes %s, want %s", got, c.want)
			}
		})
	}
}

// directiveArg is the argument of a directive's first line in conf.
func directiveArg(conf []byte, name string) string {
	for _, line := range strings.Split(string(conf), "\n") {
		if f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), ";")); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	return ""
}
