package provisioner

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is Gatewall's server-side apply field manager.
const FieldOwner = "gatewall"

func intstrFromInt(p int32) intstr.IntOrString { return intstr.FromInt32(p) }

// Apply writes the objects with server-side apply, taking ownership of every
// field Gatewall sets, so changes made by others (drift) are reverted.
func Apply(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: m}
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}
