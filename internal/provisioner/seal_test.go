package provisioner

import (
	"bytes"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/podseal"
)

var sealKey = bytes.Repeat([]byte{1}, podseal.KeySize)

// podOf is a pod the ReplicaSet controller would make of the template.
func podOf(tpl corev1.PodTemplateSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: *tpl.ObjectMeta.DeepCopy(), Spec: *tpl.Spec.DeepCopy()}
}

// TestPodTemplateIsSealed: the pod template carries the seal of its spec
// for its Gateway, with WAF or without, so its pods pass the agent
// server's check; a pod of the template with another image fails it. (The
// API server's defaulting is test/envtest's TestPodSealSurvivesDefaulting.)
func TestPodTemplateIsSealed(t *testing.T) {
	for _, waf := range []v1alpha2.WAFState{v1alpha2.WAFDisabled, v1alpha2.WAFEnabled} {
		p := params(&v1alpha2.NginxProxySpec{WAF: waf})
		p.SealKey = sealKey
		tpl := find[*appsv1.Deployment](t, p).Spec.Template
		if err := podseal.Verify(sealKey, p.Gateway.UID, podOf(tpl)); err != nil {
			t.Errorf("WAF %s: a pod of the template fails its seal: %v", waf, err)
		}
		if err := podseal.Verify(sealKey, "another-gateway", podOf(tpl)); err == nil {
			t.Errorf("WAF %s: the seal passes for another Gateway", waf)
		}
		other := podOf(tpl)
		other.Spec.Containers[0].Image = "evil.example/nginx:1"
		if err := podseal.Verify(sealKey, p.Gateway.UID, other); err == nil {
			t.Errorf("WAF %s: a pod of the template with another image passes", waf)
		}
	}
	// The seal changes with what it covers, so a changed template rolls
	// (and its old pods keep passing: their seal is of their own spec).
	a := params(&v1alpha2.NginxProxySpec{})
	a.SealKey = sealKey
	b := params(&v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Repository: ptrTo("registry.example/nginx")}}}}})
	b.SealKey = sealKey
	sa := find[*appsv1.Deployment](t, a).Spec.Template.Annotations[podseal.Annotation]
	sb := find[*appsv1.Deployment](t, b).Spec.Template.Annotations[podseal.Annotation]
	if sa == "" || sa == sb {
		t.Errorf("seals %q and %q: another image, the same seal", sa, sb)
	}
	// Without a key, no seal: the agent server refuses the pods.
	if s, ok := find[*appsv1.Deployment](t, params(&v1alpha2.NginxProxySpec{})).Spec.Template.Annotations[podseal.Annotation]; ok {
		t.Errorf("a template sealed without a key: %q", s)
	}
}

// TestPodsOptOutOfMeshInjection: data-plane pods tell Istio's and
// Linkerd's injectors to leave them alone (a sidecar would fail the seal),
// and a Gateway's infrastructure metadata cannot say otherwise.
func TestPodsOptOutOfMeshInjection(t *testing.T) {
	p := params(&v1alpha2.NginxProxySpec{AllowGatewayOverrides: &v1alpha2.GatewayOverrides{
		InfrastructureKeys: []string{"sidecar.istio.io/", "linkerd.io/"}}})
	p.Gateway.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{
		Labels:      map[gatewayv1.LabelKey]gatewayv1.LabelValue{"sidecar.istio.io/inject": "true"},
		Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{"linkerd.io/inject": "enabled"},
	}
	tpl := find[*appsv1.Deployment](t, p).Spec.Template
	if got := tpl.Labels["sidecar.istio.io/inject"]; got != "false" {
		t.Errorf("label sidecar.istio.io/inject=%q, want false", got)
	}
	if got := tpl.Annotations["linkerd.io/inject"]; got != "disabled" {
		t.Errorf("annotation linkerd.io/inject=%q, want disabled", got)
	}
}
