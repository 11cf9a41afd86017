package validation

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Messages of the autoscaling and disruption rules, identical to the CRD's
// CEL messages.
const (
	MsgAutoscalingMinMax  = "minReplicas must be less than or equal to maxReplicas"
	MsgPDBOneOf           = "exactly one of minAvailable or maxUnavailable must be set"
	MsgPDBMinAvailable    = "minAvailable must be a non-negative number or a percentage from 0% to 100%"
	MsgPDBMaxUnavailable  = "maxUnavailable must be a non-negative number or a percentage from 0% to 100%"
	maxScalingPolicies    = 16
	maxStabilizationSecs  = 3600
	maxScalingPeriodSecs  = 1800
	maxUtilizationPercent = 100
)

// percentRE is the CRD's rule for a disruption budget's percentage.
var percentRE = regexp.MustCompile(`^(100|[1-9]?[0-9])%$`)

// autoscaling checks kubernetes.deployment.autoscaling against the CRD's
// rules, which hold the API server's own bounds for a
// HorizontalPodAutoscaler: a spec that passes never makes an autoscaler
// the API server refuses.
func autoscaling(path *field.Path, a *v1alpha2.AutoscalingSpec) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if a.MinReplicas != nil {
		errs = append(errs, intRange(path.Child("minReplicas"), int64(*a.MinReplicas), 1, maxReplicas)...)
		if *a.MinReplicas > a.MaxReplicas {
			errs = append(errs, field.Invalid(path, "object", MsgAutoscalingMinMax))
		}
	}
	errs = append(errs, intRange(path.Child("maxReplicas"), int64(a.MaxReplicas), 1, maxReplicas)...)
	if t := a.TargetCPUUtilizationPercentage; t != nil {
		errs = append(errs, intRange(path.Child("targetCPUUtilizationPercentage"), int64(*t), 1, maxUtilizationPercent)...)
	}
	if t := a.TargetMemoryUtilizationPercentage; t != nil {
		errs = append(errs, intRange(path.Child("targetMemoryUtilizationPercentage"), int64(*t), 1, maxUtilizationPercent)...)
	}
	if b := a.Behavior; b != nil {
		errs = append(errs, scalingRules(path.Child("behavior", "scaleUp"), b.ScaleUp)...)
		errs = append(errs, scalingRules(path.Child("behavior", "scaleDown"), b.ScaleDown)...)
	}
	return errs
}

func scalingRules(path *field.Path, r *v1alpha2.HPAScalingRules) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil {
		errs = append(errs, intRange(path.Child("stabilizationWindowSeconds"), int64(*w), 0, maxStabilizationSecs)...)
	}
	if s := r.SelectPolicy; s != nil {
		errs = append(errs, enum(path.Child("selectPolicy"), *s, "Max", "Min", "Disabled")...)
	}
	policies := path.Child("policies")
	if len(r.Policies) > maxScalingPolicies {
		errs = append(errs, field.TooMany(policies, len(r.Policies), maxScalingPolicies))
	}
	for i, p := range r.Policies {
		at := policies.Index(i)
		errs = append(errs, enum(at.Child("type"), p.Type, "Pods", "Percent")...)
		errs = append(errs, intRange(at.Child("value"), int64(p.Value), 1, 1<<31-1)...)
		errs = append(errs, intRange(at.Child("periodSeconds"), int64(p.PeriodSeconds), 1, maxScalingPeriodSecs)...)
	}
	return errs
}

// podDisruptionBudget checks kubernetes.deployment.podDisruptionBudget
// against the CRD's rules.
func podDisruptionBudget(path *field.Path, p *v1alpha2.PodDisruptionBudgetSpec) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	if (p.MinAvailable != nil) == (p.MaxUnavailable != nil) {
		errs = append(errs, field.Invalid(path, "object", MsgPDBOneOf))
	}
	if !disruptionValue(p.MinAvailable) {
		errs = append(errs, field.Invalid(path.Child("minAvailable"), p.MinAvailable.String(), MsgPDBMinAvailable))
	}
	if !disruptionValue(p.MaxUnavailable) {
		errs = append(errs, field.Invalid(path.Child("maxUnavailable"), p.MaxUnavailable.String(), MsgPDBMaxUnavailable))
	}
	if e := p.UnhealthyPodEvictionPolicy; e != nil {
		errs = append(errs, enum(path.Child("unhealthyPodEvictionPolicy"), string(*e), "IfHealthyBudget", "AlwaysAllow")...)
	}
	return errs
}

// disruptionValue says whether v (nil: unset) is a non-negative number or
// a percentage from 0% to 100%.
func disruptionValue(v *intstr.IntOrString) bool {
	switch {
	case v == nil:
		return true
	case v.Type == intstr.Int:
		return v.IntVal >= 0
	}
	return percentRE.MatchString(v.StrVal)
}
