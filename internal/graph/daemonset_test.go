package graph

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestDaemonSetOverlay: the kind of a Gateway's data plane (Deployment or
// DaemonSet) is the Gateway's to choose, as its replicas are; the pod
// settings both kinds share overlay the class's whatever the kinds, so a
// Gateway that changes the kind keeps the images its class chose, and its
// own DaemonSet's images are left out as its Deployment's are.
func TestDaemonSetOverlay(t *testing.T) {
	classImage := &v1alpha2.Image{Repository: ptr.To("registry.example/nginx"), Tag: ptr.To("class")}
	gwImage := &v1alpha2.Image{Repository: ptr.To("attacker.example/nginx"), Tag: ptr.To("evil")}
	deployment := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Replicas: ptr.To(int32(3)), Container: &v1alpha2.ContainerSpec{Image: classImage},
		Autoscaling: &v1alpha2.AutoscalingSpec{Enable: true, MaxReplicas: 5},
	}}}
	daemonSet := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{
		Container: &v1alpha2.ContainerSpec{Image: classImage},
	}}}
	gwDaemonSet := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{
		Container: &v1alpha2.ContainerSpec{Image: gwImage},
		Pod:       &v1alpha2.PodSpec{ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "mine"}}},
	}}}

	t.Run("a Gateway's DaemonSet under a class's Deployment keeps the class's image", func(t *testing.T) {
		g := Build(overlayInput(deployment, gwDaemonSet), key("default", "gw"))
		k := g.NginxProxy.Kubernetes
		if !g.Valid || k.Deployment != nil || k.DaemonSet == nil {
			t.Fatalf("valid=%v deployment=%+v daemonSet=%+v; want a DaemonSet alone", g.Valid, k.Deployment, k.DaemonSet)
		}
		if img := k.DaemonSet.Container.Image; *img.Repository != "registry.example/nginx" || *img.Tag != "class" {
			t.Errorf("image %s:%s; want the class's", *img.Repository, *img.Tag)
		}
		if p := k.DaemonSet.Pod; p == nil || len(p.ImagePullSecrets) != 1 || p.ImagePullSecrets[0].Name != "mine" {
			t.Errorf("the Gateway's pull Secrets were lost: %+v", p)
		}
		accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
		if accepted == nil || !strings.Contains(accepted.Message, "kubernetes.daemonSet.container.image") {
			t.Errorf("Accepted %+v does not name the image left out", accepted)
		}
	})
	t.Run("a Gateway's replicas under a class's DaemonSet make a Deployment with the class's image", func(t *testing.T) {
		eff := EffectiveNginxProxy(daemonSet, &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr.To(int32(2))}}})
		k := eff.Kubernetes
		if k.DaemonSet != nil || k.Deployment == nil || ptr.Deref(k.Deployment.Replicas, 0) != 2 {
			t.Fatalf("daemonSet=%+v deployment=%+v; want a Deployment of 2 replicas alone", k.DaemonSet, k.Deployment)
		}
		if img := k.Deployment.Container.Image; *img.Tag != "class" {
			t.Errorf("image tag %s; want the class's", *img.Tag)
		}
	})
	t.Run("a Gateway that sets neither keeps its class's DaemonSet", func(t *testing.T) {
		eff := EffectiveNginxProxy(daemonSet, &v1alpha2.NginxProxySpec{WorkerConnections: ptr.To(int32(512))})
		if k := eff.Kubernetes; k == nil || k.DaemonSet == nil || k.Deployment != nil {
			t.Errorf("kubernetes %+v; want the class's DaemonSet", k)
		}
		eff = EffectiveNginxProxy(daemonSet, &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Service: &v1alpha2.ServiceSpec{}}})
		if k := eff.Kubernetes; k.DaemonSet == nil || k.Deployment != nil {
			t.Errorf("kubernetes %+v; want the class's DaemonSet", k)
		}
	})
	t.Run("a Deployment's own settings do not follow a DaemonSet", func(t *testing.T) {
		eff := EffectiveNginxProxy(deployment, &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}}})
		if eff.Kubernetes.Deployment != nil || eff.Kubernetes.DaemonSet == nil {
			t.Errorf("kubernetes %+v; want a DaemonSet alone (no autoscaler of a DaemonSet)", eff.Kubernetes)
		}
	})
}

// TestPodOverlay: a Gateway's pod settings overlay the class's field by
// field: its termination grace alone keeps the class's pull Secrets.
func TestPodOverlay(t *testing.T) {
	pod := func(p v1alpha2.PodSpec) *v1alpha2.NginxProxySpec {
		return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &p}}}
	}
	class := pod(v1alpha2.PodSpec{ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "class-registry"}}, TerminationGracePeriodSeconds: ptr.To(int64(60))})
	got := EffectiveNginxProxy(class, pod(v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr.To(int64(120))})).Kubernetes.Deployment.Pod
	if ptr.Deref(got.TerminationGracePeriodSeconds, 0) != 120 || len(got.ImagePullSecrets) != 1 || got.ImagePullSecrets[0].Name != "class-registry" {
		t.Errorf("pod %+v; want the Gateway's grace of 120 s and the class's pull Secret", got)
	}
	got = EffectiveNginxProxy(class, pod(v1alpha2.PodSpec{ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "mine"}}})).Kubernetes.Deployment.Pod
	if ptr.Deref(got.TerminationGracePeriodSeconds, 0) != 60 || got.ImagePullSecrets[0].Name != "mine" {
		t.Errorf("pod %+v; want the class's grace of 60 s and the Gateway's pull Secret", got)
	}
}

// TestTopologySpreadOverlay: a Gateway's spread constraints replace its
// class's list whole; without them the class's stay.
func TestTopologySpreadOverlay(t *testing.T) {
	pod := func(p v1alpha2.PodSpec) *v1alpha2.NginxProxySpec {
		return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &p}}}
	}
	zone := v1alpha2.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: "DoNotSchedule"}
	host := v1alpha2.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: "ScheduleAnyway"}
	class := pod(v1alpha2.PodSpec{TopologySpreadConstraints: []v1alpha2.TopologySpreadConstraint{zone}})
	got := EffectiveNginxProxy(class, pod(v1alpha2.PodSpec{TopologySpreadConstraints: []v1alpha2.TopologySpreadConstraint{host}})).Kubernetes.Deployment.Pod
	if len(got.TopologySpreadConstraints) != 1 || got.TopologySpreadConstraints[0].TopologyKey != host.TopologyKey {
		t.Errorf("constraints %+v; want the Gateway's alone", got.TopologySpreadConstraints)
	}
	got = EffectiveNginxProxy(class, pod(v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr.To(int64(5))})).Kubernetes.Deployment.Pod
	if len(got.TopologySpreadConstraints) != 1 || got.TopologySpreadConstraints[0].TopologyKey != zone.TopologyKey {
		t.Errorf("constraints %+v; want the class's", got.TopologySpreadConstraints)
	}
}
