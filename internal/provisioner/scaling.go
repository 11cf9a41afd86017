package provisioner

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// autoscalingOf is the effective NginxProxy's enabled autoscaling, or nil.
func autoscalingOf(np *v1alpha2.NginxProxySpec) *v1alpha2.AutoscalingSpec {
	if np.Kubernetes == nil || np.Kubernetes.Deployment == nil {
		return nil
	}
	if a := np.Kubernetes.Deployment.Autoscaling; a != nil && a.Enable {
		return a
	}
	return nil
}

// horizontalPodAutoscaler scales the data-plane Deployment named as meta
// (nil without autoscaling). It names the Deployment and nothing else: the
// manager's admission policy (config/rbac) lets it write no autoscaler
// that scales another object.
func horizontalPodAutoscaler(np *v1alpha2.NginxProxySpec, meta metav1.ObjectMeta) client.Object {
	a := autoscalingOf(np)
	if a == nil {
		return nil
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: meta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: meta.Name},
			MinReplicas:    a.MinReplicas,
			MaxReplicas:    a.MaxReplicas,
			Behavior:       hpaBehavior(a.Behavior),
		},
	}
	for _, t := range []struct {
		name   corev1.ResourceName
		target *int32
	}{{corev1.ResourceCPU, a.TargetCPUUtilizationPercentage}, {corev1.ResourceMemory, a.TargetMemoryUtilizationPercentage}} {
		if t.target == nil {
			continue
		}
		hpa.Spec.Metrics = append(hpa.Spec.Metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: t.name, Target: autoscalingv2.MetricTarget{
				Type: autoscalingv2.UtilizationMetricType, AverageUtilization: t.target,
			}},
		})
	}
	hpa.Spec.Metrics = append(hpa.Spec.Metrics, extraMetrics(a)...)
	return hpa
}

func hpaBehavior(b *v1alpha2.HPABehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	if b == nil {
		return nil
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: hpaRules(b.ScaleUp), ScaleDown: hpaRules(b.ScaleDown)}
}

func hpaRules(r *v1alpha2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds}
	if r.SelectPolicy != nil {
		out.SelectPolicy = (*autoscalingv2.ScalingPolicySelect)(r.SelectPolicy)
	}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy{
			Type: autoscalingv2.HPAScalingPolicyType(p.Type), Value: p.Value, PeriodSeconds: p.PeriodSeconds,
		})
	}
	return out
}

// podDisruptionBudget limits the evictions of the data-plane pods of the
// Gateway's current class (nil without one): it selects them as the
// Service does.
func podDisruptionBudget(np *v1alpha2.NginxProxySpec, meta metav1.ObjectMeta, selector map[string]string) client.Object {
	if np.Kubernetes == nil || np.Kubernetes.Deployment == nil || np.Kubernetes.Deployment.PodDisruptionBudget == nil {
		return nil
	}
	p := np.Kubernetes.Deployment.PodDisruptionBudget
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta,
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:                   &metav1.LabelSelector{MatchLabels: selector},
			MinAvailable:               p.MinAvailable,
			MaxUnavailable:             p.MaxUnavailable,
			UnhealthyPodEvictionPolicy: p.UnhealthyPodEvictionPolicy,
		},
	}
}
