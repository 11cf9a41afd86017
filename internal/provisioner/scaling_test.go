package provisioner

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// ngfScaling is an NginxProxy spec as NGINX Gateway Fabric's users write
// its autoscaling and disruption budget.
const ngfScaling = `
kubernetes:
  deployment:
    replicas: 2
    autoscaling:
      enable: true
      minReplicas: 2
      maxReplicas: 8
      targetCPUUtilizationPercentage: 70
      targetMemoryUtilizationPercentage: 85
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 300
          selectPolicy: Min
          policies:
          - type: Pods
            value: 1
            periodSeconds: 60
    podDisruptionBudget:
      maxUnavailable: 25%
      unhealthyPodEvictionPolicy: AlwaysAllow
`

func decodeSpec(t *testing.T, s string) *v1alpha2.NginxProxySpec {
	t.Helper()
	spec := &v1alpha2.NginxProxySpec{}
	if err := yaml.UnmarshalStrict([]byte(s), spec); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return spec
}

func TestAutoscalingAndDisruptionBudget(t *testing.T) {
	p := params(decodeSpec(t, ngfScaling))
	dep := find[*appsv1.Deployment](t, p)
	if dep.Spec.Replicas != nil {
		t.Errorf("the Deployment sets %d replicas; with autoscaling they are the autoscaler's", *dep.Spec.Replicas)
	}

	hpa := find[*autoscalingv2.HorizontalPodAutoscaler](t, p)
	want := autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name},
		MinReplicas:    ptr.To(int32(2)), MaxReplicas: 8,
		Metrics: []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(70))}}},
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(85))}}},
		},
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: ptr.To(int32(300)), SelectPolicy: ptr.To(autoscalingv2.MinChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}},
		}},
	}
	if !equality.Semantic.DeepEqual(hpa.Spec, want) {
		t.Errorf("autoscaler spec\n got %+v\nwant %+v", hpa.Spec, want)
	}
	if hpa.Name != dep.Name || !equality.Semantic.DeepEqual(hpa.OwnerReferences, dep.OwnerReferences) ||
		hpa.Annotations[ControllerAnnotation] != testOwner.ControllerName || hpa.Labels[ManagedByLabel] != managedBy {
		t.Errorf("autoscaler %s is not owned and marked as the Deployment %s: %+v", hpa.Name, dep.Name, hpa.ObjectMeta)
	}

	pdb := find[*policyv1.PodDisruptionBudget](t, p)
	svc := find[*corev1.Service](t, p)
	if pdb.Name != dep.Name || !equality.Semantic.DeepEqual(pdb.OwnerReferences, dep.OwnerReferences) {
		t.Errorf("disruption budget %s is not owned as the Deployment %s", pdb.Name, dep.Name)
	}
	if !equality.Semantic.DeepEqual(pdb.Spec.Selector.MatchLabels, svc.Spec.Selector) {
		t.Errorf("disruption budget selects %v; want the Service's pods %v", pdb.Spec.Selector.MatchLabels, svc.Spec.Selector)
	}
	if pdb.Spec.MinAvailable != nil || !equality.Semantic.DeepEqual(pdb.Spec.MaxUnavailable, ptr.To(intstr.FromString("25%"))) ||
		ptr.Deref(pdb.Spec.UnhealthyPodEvictionPolicy, "") != policyv1.AlwaysAllow {
		t.Errorf("disruption budget spec %+v", pdb.Spec)
	}
	for _, o := range Objects(p) {
		if _, ok := kindOf(o); !ok {
			t.Errorf("%s %s is not of a data-plane kind: Apply refuses it and Remove never finds it", kind(o), o.GetName())
		}
	}
}

// TestAutoscalingDisabled: without autoscaling enabled there is no
// autoscaler (Remove deletes one made before) and replicas apply.
func TestAutoscalingDisabled(t *testing.T) {
	for name, spec := range map[string]string{
		"enable false":   `{kubernetes: {deployment: {replicas: 3, autoscaling: {enable: false, maxReplicas: 8}}}}`,
		"no autoscaling": `{kubernetes: {deployment: {replicas: 3}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := params(decodeSpec(t, spec))
			for _, o := range Objects(p) {
				switch o.(type) {
				case *autoscalingv2.HorizontalPodAutoscaler, *policyv1.PodDisruptionBudget:
					t.Errorf("a %s without its setting", kind(o))
				}
			}
			if r := find[*appsv1.Deployment](t, p).Spec.Replicas; ptr.Deref(r, 0) != 3 {
				t.Errorf("replicas %v, want 3", r)
			}
		})
	}
}
