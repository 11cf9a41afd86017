package provisioner

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestContainerResources: every data-plane container has requests, and
// NGINX and the endpoints client limits, by default (docs/budgets.md);
// an NginxProxy's resources for a container replace its defaults whole.
func TestContainerResources(t *testing.T) {
	quantities := func(cpu, mem, cpuLimit, memLimit string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
		if cpuLimit != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memLimit)}
		}
		return r
	}
	own := quantities("1", "1Gi", "4", "8Gi")
	memoryOnly := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	for _, c := range []struct {
		name string
		np   *v1alpha2.NginxProxySpec
		want map[string]corev1.ResourceRequirements
	}{
		{"defaults", &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled}, map[string]corev1.ResourceRequirements{
			"nginx":            quantities("50m", "256Mi", "2", "2560Mi"),
			EndpointsContainer: quantities("10m", "32Mi", "500m", "128Mi"),
			"waf-enforcer":     quantities("100m", "256Mi", "", ""),
			"waf-config-mgr":   quantities("100m", "256Mi", "", ""),
		}},
		{"the NginxProxy's", &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled, Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
			Container: &v1alpha2.ContainerSpec{Resources: &own},
			Endpoints: &v1alpha2.EndpointsContainer{Resources: &memoryOnly},
			WAFContainers: &v1alpha2.WAFContainers{
				Enforcer:      &v1alpha2.ContainerSpec{Resources: &own},
				ConfigManager: &v1alpha2.ContainerSpec{Resources: &memoryOnly},
			},
		}}}, map[string]corev1.ResourceRequirements{
			"nginx": own, EndpointsContainer: memoryOnly, "waf-enforcer": own, "waf-config-mgr": memoryOnly,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := find[*appsv1.Deployment](t, params(c.np)).Spec.Template.Spec
			if len(pod.Containers) != len(c.want) {
				t.Fatalf("%d containers, want %d", len(pod.Containers), len(c.want))
			}
			for _, ct := range pod.Containers {
				if want := c.want[ct.Name]; !equalResources(ct.Resources, want) {
					t.Errorf("%s: resources %v, want %v", ct.Name, ct.Resources, want)
				}
			}
		})
	}
}

func equalResources(a, b corev1.ResourceRequirements) bool {
	same := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || v.Cmp(w) != 0 {
				return false
			}
		}
		return true
	}
	return same(a.Requests, b.Requests) && same(a.Limits, b.Limits)
}
