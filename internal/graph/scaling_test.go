package graph

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestScalingOverlay: a Gateway's autoscaling and disruption budget each
// replace its class's whole (the class's minReplicas does not survive
// under the Gateway's maxReplicas, where it could exceed it); what the
// Gateway leaves unset is the class's. Neither is held back by
// allowGatewayOverrides: they bound what the Gateway's namespace already
// may do (docs/security.md).
func TestScalingOverlay(t *testing.T) {
	with := func(a *v1alpha2.AutoscalingSpec, b *v1alpha2.PodDisruptionBudgetSpec) *v1alpha2.NginxProxySpec {
		return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Autoscaling: a, PodDisruptionBudget: b}}}
	}
	classHPA := &v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr.To(int32(4)), MaxReplicas: 10, TargetCPUUtilizationPercentage: ptr.To(int32(60))}
	classPDB := &v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2))}
	gwHPA := &v1alpha2.AutoscalingSpec{Enable: true, MaxReplicas: 3}
	gwPDB := &v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("50%"))}

	got := EffectiveNginxProxy(with(classHPA, classPDB), with(gwHPA, nil)).Kubernetes.Deployment
	if !equality.Semantic.DeepEqual(got.Autoscaling, gwHPA) || !equality.Semantic.DeepEqual(got.PodDisruptionBudget, classPDB) {
		t.Errorf("got autoscaling %+v, budget %+v; want the Gateway's autoscaling whole and the class's budget", got.Autoscaling, got.PodDisruptionBudget)
	}
	got = EffectiveNginxProxy(with(classHPA, classPDB), with(nil, gwPDB)).Kubernetes.Deployment
	if !equality.Semantic.DeepEqual(got.Autoscaling, classHPA) || !equality.Semantic.DeepEqual(got.PodDisruptionBudget, gwPDB) {
		t.Errorf("got autoscaling %+v, budget %+v; want the class's autoscaling and the Gateway's budget whole", got.Autoscaling, got.PodDisruptionBudget)
	}

	in := overlayInput(&v1alpha2.NginxProxySpec{}, with(gwHPA, gwPDB))
	g := Build(in, key("default", "gw"))
	if d := g.NginxProxy.Kubernetes.Deployment; !g.Valid || !equality.Semantic.DeepEqual(d.Autoscaling, gwHPA) || !equality.Semantic.DeepEqual(d.PodDisruptionBudget, gwPDB) {
		t.Errorf("a class without allowGatewayOverrides: Gateway valid=%v, deployment %+v; want the Gateway's autoscaling and budget", g.Valid, d)
	}
}
