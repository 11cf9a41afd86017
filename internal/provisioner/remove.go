package provisioner

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Remove deletes the data-plane objects owner made for gw in its
// namespace, except those in keep (by kind and name): the data plane of a
// Gateway that is no longer this installation's (keep nothing), or the
// objects of its former class after its class changed (keep the current
// ones). It finds them by the gateway-name label and deletes only those
// owner.Owns, each with a precondition on its own UID: an object this
// installation did not create for this Gateway (another installation's data
// plane for it, say) is never deleted.
func Remove(ctx context.Context, c client.Client, owner Owner, gw *gatewayv1.Gateway, keep []client.Object) error {
	kept := map[string]bool{}
	for _, o := range keep {
		kept[kind(o)+"/"+o.GetName()] = true
	}
	for _, k := range Kinds {
		list := k.List()
		if err := c.List(ctx, list, client.InNamespace(gw.Namespace), client.MatchingLabels{GatewayNameLabel: gw.Name}); err != nil {
			return fmt.Errorf("listing %ss of Gateway %s/%s: %w", k.Name, gw.Namespace, gw.Name, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			o, ok := item.(client.Object)
			if !ok || kept[k.Name+"/"+o.GetName()] || !owner.Owns(gw, o) {
				continue
			}
			uid := o.GetUID()
			err := c.Delete(ctx, o, client.Preconditions{UID: &uid}, client.PropagationPolicy(metav1.DeletePropagationBackground))
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("deleting %s %s/%s: %w", k.Name, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}
