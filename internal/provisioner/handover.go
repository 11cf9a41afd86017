package provisioner

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReplicasFieldOwner is the field manager that keeps a Deployment's
// replicas when autoscaling takes them over (handOverReplicas).
const ReplicasFieldOwner = "gatewall-replicas-handover"

// handOverReplicas keeps a Deployment's replicas when Gatewall stops
// setting them (its NginxProxy turned autoscaling on). Server-side apply
// removes a field its only manager no longer applies: the Deployment
// would fall back to 1 replica until the autoscaler's next sync (15 s) put
// them back, taking pods away from a Gateway under load. So, when u (what
// Apply is about to write) has no replicas and Gatewall's apply still
// manages the live Deployment's, they are first applied, as they are,
// under ReplicasFieldOwner, which then keeps them; the autoscaler changes
// them from there. have is the cached object (nil: none exists yet).
func handOverReplicas(ctx context.Context, c client.Client, confirm client.Reader, u *unstructured.Unstructured, have client.Object) error {
	if have == nil || u.GetKind() != "Deployment" {
		return nil
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); set {
		return nil
	}
	// The cache holds no Deployment's spec nor managed fields: read them.
	r := confirm
	if r == nil {
		r = c
	}
	live := &appsv1.Deployment{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(u), live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if live.Spec.Replicas == nil || !appliesReplicas(live.ManagedFields) {
		return nil
	}
	keep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()},
		"spec":     map[string]any{"replicas": int64(*live.Spec.Replicas)},
	}}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(keep), client.FieldOwner(ReplicasFieldOwner)); err != nil {
		return fmt.Errorf("keeping the %d replicas of Deployment %s/%s for its autoscaler: %w", *live.Spec.Replicas, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// appliesReplicas says whether Gatewall's apply manages spec.replicas.
func appliesReplicas(fields []metav1.ManagedFieldsEntry) bool {
	for _, f := range fields {
		if f.Manager != FieldOwner || f.Operation != metav1.ManagedFieldsOperationApply || f.FieldsV1 == nil {
			continue
		}
		var set struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &set) == nil {
			if _, ok := set.Spec["f:replicas"]; ok {
				return true
			}
		}
	}
	return false
}
