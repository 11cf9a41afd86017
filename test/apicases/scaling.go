package apicases

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// scalingCases are NginxProxy kubernetes.deployment.autoscaling and
// podDisruptionBudget (NGINX Gateway Fabric's fields).
func scalingCases() []Case {
	const (
		hpa = "spec.kubernetes.deployment.autoscaling"
		pdb = "spec.kubernetes.deployment.podDisruptionBudget"
	)
	withHPA := func(a v1alpha2.AutoscalingSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Autoscaling: &a}}
		})
	}
	withPDB := func(p v1alpha2.PodDisruptionBudgetSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{PodDisruptionBudget: &p}}
		})
	}
	rules := func(r v1alpha2.HPAScalingRules) v1alpha2.AutoscalingSpec {
		return v1alpha2.AutoscalingSpec{Enable: true, MaxReplicas: 3, Behavior: &v1alpha2.HPABehavior{ScaleDown: &r}}
	}
	policy := func(typ string, value, period int32) []v1alpha2.HPAScalingPolicy {
		return []v1alpha2.HPAScalingPolicy{{Type: typ, Value: value, PeriodSeconds: period}}
	}
	many := make([]v1alpha2.HPAScalingPolicy, 17)
	for i := range many {
		many[i] = v1alpha2.HPAScalingPolicy{Type: "Pods", Value: 1, PeriodSeconds: 60}
	}
	n := func(name string) string { return "NginxProxy: " + name }
	pct := intstr.FromString
	num := intstr.FromInt32
	return []Case{
		{Name: n("autoscaling as NGINX Gateway Fabric's examples set it"), Object: withHPA(v1alpha2.AutoscalingSpec{
			Enable: true, MinReplicas: ptr(int32(2)), MaxReplicas: 10,
			TargetCPUUtilizationPercentage: ptr(int32(70)), TargetMemoryUtilizationPercentage: ptr(int32(80)),
			Behavior: &v1alpha2.HPABehavior{
				ScaleUp:   &v1alpha2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(0)), SelectPolicy: ptr("Max"), Policies: policy("Percent", 100, 15)},
				ScaleDown: &v1alpha2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(3600)), SelectPolicy: ptr("Disabled"), Policies: policy("Pods", 1, 1800)},
			},
		})},
		{Name: n("autoscaling disabled"), Object: withHPA(v1alpha2.AutoscalingSpec{MaxReplicas: 1})},
		{Name: n("autoscaling maxReplicas 0"), Object: withHPA(v1alpha2.AutoscalingSpec{Enable: true}),
			Field: hpa + ".maxReplicas", Message: "should be greater than or equal to 1"},
		{Name: n("autoscaling maxReplicas 1001"), Object: withHPA(v1alpha2.AutoscalingSpec{Enable: true, MaxReplicas: 1001}),
			Field: hpa + ".maxReplicas", Message: "should be less than or equal to 1000"},
		{Name: n("autoscaling minReplicas 0"), Object: withHPA(v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr(int32(0)), MaxReplicas: 2}),
			Field: hpa + ".minReplicas", Message: "should be greater than or equal to 1"},
		{Name: n("autoscaling minReplicas above maxReplicas"), Object: withHPA(v1alpha2.AutoscalingSpec{Enable: true, MinReplicas: ptr(int32(3)), MaxReplicas: 2}),
			Field: hpa, Message: validation.MsgAutoscalingMinMax},
		{Name: n("autoscaling CPU target 0%"), Object: withHPA(v1alpha2.AutoscalingSpec{Enable: true, MaxReplicas: 2, TargetCPUUtilizationPercentage: ptr(int32(0))}),
			Field: hpa + ".targetCPUUtilizationPercentage", Message: "should be greater than or equal to 1"},
		{Name: n("autoscaling memory target 101%"), Object: withHPA(v1alpha2.AutoscalingSpec{Enable: true, MaxReplicas: 2, TargetMemoryUtilizationPercentage: ptr(int32(101))}),
			Field: hpa + ".targetMemoryUtilizationPercentage", Message: "should be less than or equal to 100"},
		{Name: n("autoscaling stabilization window 3601s"), Object: withHPA(rules(v1alpha2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(3601))})),
			Field: hpa + ".behavior.scaleDown.stabilizationWindowSeconds", Message: "should be less than or equal to 3600"},
		{Name: n("autoscaling selectPolicy Average"), Object: withHPA(rules(v1alpha2.HPAScalingRules{SelectPolicy: ptr("Average")})),
			Field: hpa + ".behavior.scaleDown.selectPolicy", Message: `Unsupported value: "Average"`},
		{Name: n("autoscaling policy of type Replicas"), Object: withHPA(rules(v1alpha2.HPAScalingRules{Policies: policy("Replicas", 1, 60)})),
			Field: hpa + ".behavior.scaleDown.policies[0].type", Message: `Unsupported value: "Replicas"`},
		{Name: n("autoscaling policy of value 0"), Object: withHPA(rules(v1alpha2.HPAScalingRules{Policies: policy("Pods", 0, 60)})),
			Field: hpa + ".behavior.scaleDown.policies[0].value", Message: "should be greater than or equal to 1"},
		{Name: n("autoscaling policy period 1801s"), Object: withHPA(rules(v1alpha2.HPAScalingRules{Policies: policy("Pods", 1, 1801)})),
			Field: hpa + ".behavior.scaleDown.policies[0].periodSeconds", Message: "should be less than or equal to 1800"},
		{Name: n("autoscaling 17 policies"), Object: withHPA(rules(v1alpha2.HPAScalingRules{Policies: many})),
			Field: hpa + ".behavior.scaleDown.policies", Message: "must have at most 16 items"},

		{Name: n("podDisruptionBudget minAvailable 1"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr(num(1))})},
		{Name: n("podDisruptionBudget maxUnavailable 100% and AlwaysAllow"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr(pct("100%")), UnhealthyPodEvictionPolicy: ptr(policyv1.AlwaysAllow)})},
		{Name: n("podDisruptionBudget minAvailable 0%"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr(pct("0%"))})},
		{Name: n("podDisruptionBudget with neither"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{}),
			Field: pdb, Message: validation.MsgPDBOneOf},
		{Name: n("podDisruptionBudget with both"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr(num(1)), MaxUnavailable: ptr(num(1))}),
			Field: pdb, Message: validation.MsgPDBOneOf},
		{Name: n("podDisruptionBudget minAvailable -1"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr(num(-1))}),
			Field: pdb + ".minAvailable", Message: validation.MsgPDBMinAvailable},
		{Name: n("podDisruptionBudget minAvailable 101%"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MinAvailable: ptr(pct("101%"))}),
			Field: pdb + ".minAvailable", Message: validation.MsgPDBMinAvailable},
		{Name: n("podDisruptionBudget maxUnavailable half"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr(pct("half"))}),
			Field: pdb + ".maxUnavailable", Message: validation.MsgPDBMaxUnavailable},
		{Name: n("podDisruptionBudget maxUnavailable 05%"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{MaxUnavailable: ptr(pct("05%"))}),
			Field: pdb + ".maxUnavailable", Message: validation.MsgPDBMaxUnavailable},
		{Name: n("podDisruptionBudget unhealthyPodEvictionPolicy Never"), Object: withPDB(v1alpha2.PodDisruptionBudgetSpec{
			MinAvailable: ptr(num(1)), UnhealthyPodEvictionPolicy: ptr(policyv1.UnhealthyPodEvictionPolicyType("Never"))}),
			Field: pdb + ".unhealthyPodEvictionPolicy", Message: `Unsupported value: "Never"`},
	}
}

// daemonSetCases are NginxProxy kubernetes.daemonSet (NGINX Gateway
// Fabric's field): a DaemonSet instead of the Deployment, never both.
func daemonSetCases() []Case {
	with := func(k v1alpha2.KubernetesSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) { s.Kubernetes = &k })
	}
	return []Case{
		{Name: "NginxProxy: daemonSet", Object: with(v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{
			Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Tag: ptr("1.2.3")}},
			Pod:       &v1alpha2.PodSpec{ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "registry"}}},
		}})},
		{Name: "NginxProxy: an empty daemonSet", Object: with(v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}})},
		{Name: "NginxProxy: deployment and daemonSet", Object: with(v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{}, DaemonSet: &v1alpha2.DaemonSetSpec{}}),
			Field: "spec.kubernetes", Message: validation.MsgWorkloadOneOf},
		{Name: "NginxProxy: daemonSet image tag with a space", Object: with(v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{
			Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Tag: ptr("1 2")}}}}),
			Field: "spec.kubernetes.daemonSet.container.image.tag", Message: "should match '^[A-Za-z0-9_][A-Za-z0-9_.-]*$'"},
		{Name: "NginxProxy: daemonSet pull Secret of an invalid name", Object: with(v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{
			Pod: &v1alpha2.PodSpec{ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "Registry"}}}}}),
			Field: "spec.kubernetes.daemonSet.pod.imagePullSecrets[0].name", Message: "should match"},
	}
}

// podCases are NginxProxy pod settings of NGINX Gateway Fabric's
// kubernetes.deployment.pod and daemonSet.pod.
func podCases() []Case {
	with := func(p v1alpha2.PodSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &p}}
		})
	}
	withDS := func(p v1alpha2.PodSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{Pod: &p}}
		})
	}
	return []Case{
		{Name: "NginxProxy: terminationGracePeriodSeconds 0", Object: with(v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr(int64(0))})},
		{Name: "NginxProxy: terminationGracePeriodSeconds 3600", Object: withDS(v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr(int64(3600))})},
		{Name: "NginxProxy: terminationGracePeriodSeconds -1", Object: with(v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr(int64(-1))}),
			Field: "spec.kubernetes.deployment.pod.terminationGracePeriodSeconds", Message: "should be greater than or equal to 0"},
		{Name: "NginxProxy: daemonSet terminationGracePeriodSeconds 3601", Object: withDS(v1alpha2.PodSpec{TerminationGracePeriodSeconds: ptr(int64(3601))}),
			Field: "spec.kubernetes.daemonSet.pod.terminationGracePeriodSeconds", Message: "should be less than or equal to 3600"},
	}
}

// spreadCases are NginxProxy pod.topologySpreadConstraints.
func spreadCases() []Case {
	const path = "spec.kubernetes.deployment.pod.topologySpreadConstraints"
	with := func(cs ...v1alpha2.TopologySpreadConstraint) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &v1alpha2.PodSpec{TopologySpreadConstraints: cs}}}
		})
	}
	zone := func(when corev1.UnsatisfiableConstraintAction) v1alpha2.TopologySpreadConstraint {
		return v1alpha2.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: when}
	}
	honor := corev1.NodeInclusionPolicyHonor
	full := zone(corev1.DoNotSchedule)
	full.MinDomains, full.NodeAffinityPolicy, full.NodeTaintsPolicy = ptr(int32(3)), &honor, &honor
	withKey := func(k string) v1alpha2.TopologySpreadConstraint {
		c := zone(corev1.ScheduleAnyway)
		c.TopologyKey = k
		return c
	}
	minDomainsAnyway := zone(corev1.ScheduleAnyway)
	minDomainsAnyway.MinDomains = ptr(int32(2))
	skew0 := zone(corev1.DoNotSchedule)
	skew0.MaxSkew = 0
	badPolicy := zone(corev1.DoNotSchedule)
	badPolicy.NodeTaintsPolicy = ptr(corev1.NodeInclusionPolicy("Always"))
	many := make([]v1alpha2.TopologySpreadConstraint, 9)
	for i := range many {
		many[i] = withKey(fmt.Sprintf("example.com/level-%d", i))
	}
	keyPattern := "should match '" + validation.TopologyKeyPattern + "'"
	n := func(name string) string { return "NginxProxy: topologySpreadConstraints " + name }
	return []Case{
		{Name: n("by zone and by node"), Object: with(full, withKey("kubernetes.io/hostname"))},
		{Name: n("one key with both actions"), Object: with(zone(corev1.DoNotSchedule), zone(corev1.ScheduleAnyway))},
		{Name: n("maxSkew 0"), Object: with(skew0), Field: path + "[0].maxSkew", Message: "should be greater than or equal to 1"},
		{Name: n("an empty topologyKey"), Object: with(withKey("")), Field: path + "[0].topologyKey", Message: "should be at least 1 chars long"},
		{Name: n("a topologyKey with a space"), Object: with(withKey("my zone")), Field: path + "[0].topologyKey", Message: keyPattern},
		{Name: n("whenUnsatisfiable Never"), Object: with(zone("Never")), Field: path + "[0].whenUnsatisfiable", Message: `Unsupported value: "Never"`},
		{Name: n("nodeTaintsPolicy Always"), Object: with(badPolicy), Field: path + "[0].nodeTaintsPolicy", Message: `Unsupported value: "Always"`},
		{Name: n("minDomains with ScheduleAnyway"), Object: with(minDomainsAnyway), Field: path + "[0]", Message: validation.MsgSpreadMinDomains},
		{Name: n("a pair twice"), Object: with(zone(corev1.DoNotSchedule), zone(corev1.DoNotSchedule)), Field: path, Message: validation.MsgSpreadPairTwice},
		{Name: n("9 constraints"), Object: with(many...), Field: path, Message: "must have at most 8 items"},
	}
}
