package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/translate"
)

// handPolicyStatuses hands the policy status writer the Gateway's entry of
// every policy that has it as an ancestor in its translation t, with the
// data plane's answer dp, and says the Gateway has none for every other
// policy: those its input held (held, with the version it held),
// those the writer holds an entry of,
// and those whose status shows one (written before the manager started).
// t nil: the Gateway is gone or not Gatewall's, so no policy has an entry.
func (r *GatewayReconciler) handPolicyStatuses(ctx context.Context, gw types.NamespacedName, t *translate.Translation, dp status.DataPlane,
	held map[graph.ObjectRef]string) error {
	if r.PolicyStatuses == nil {
		return nil
	}
	current := r.handPolicyEntries(ctx, gw, t, dp, held)
	owner := statuswrite.GatewayOwner(gw)
	shown, err := policiesShowing(ctx, r.Client, r.Config.policyKinds(), r.Config.ControllerName, gw)
	if err != nil {
		return err
	}
	for _, ref := range slices.Concat(slices.Collect(maps.Keys(held)), r.PolicyStatuses.Owned(owner), shown) {
		if !current[ref] {
			r.PolicyStatuses.Set(ref, owner, nil)
		}
	}
	return nil
}

// handPolicyEntries hands the policy status writer the Gateway's entry of
// every policy that has it as an ancestor in its translation t (with the
// data plane's answer dp, and the version of the policy the input held):
// the Gateway reconciler does it as soon as it has translated, so that a
// WAF policy's records of the bundles in force (which the next
// translation reads) follow at once, and its status job again with the
// data plane's answer. It returns the policies it handed an entry.
func (r *GatewayReconciler) handPolicyEntries(ctx context.Context, gw types.NamespacedName, t *translate.Translation, dp status.DataPlane,
	held map[graph.ObjectRef]string) map[graph.ObjectRef]bool {
	handed := map[graph.ObjectRef]bool{}
	if r.PolicyStatuses == nil || t == nil {
		return handed
	}
	owner := statuswrite.GatewayOwner(gw)
	for _, kind := range r.Config.policyKinds() {
		a := t.Policies[kind.Name()]
		if a == nil {
			continue
		}
		_, own := kind.(policy.OwnStatus)
		for key := range a.PolicyOutcomes() {
			anc, ok := translate.GatewayAncestor(kind, t, key, dp)
			if !ok {
				continue
			}
			ref := graph.ObjectRef{Kind: kind.Name(), Key: key}
			handed[ref] = true
			e := &statuswrite.PolicyEntry{Ancestors: []status.Ancestor{anc}, Version: held[ref]}
			if own {
				// Written before the reconcile ends (SetNow): one Gateway
				// is never reconciled twice at once, so its next
				// translation reads the records this one decides.
				e.Attachment = a
				r.PolicyStatuses.SetNow(ctx, ref, owner, e)
				continue
			}
			r.PolicyStatuses.Set(ref, owner, e)
		}
	}
	return handed
}

// translationDataPlane is what the Gateway's data plane did with its
// translation t: held back (its message), or its answer for the version
// published.
func (r *GatewayReconciler) translationDataPlane(gw types.NamespacedName, t *translate.Translation, published bool, version string) status.DataPlane {
	if !published {
		return status.DataPlane{State: status.Pending, Message: t.HeldMessage()}
	}
	return t.ExplainDataPlane(r.DataPlane.State(gw, version))
}

// policyDataPlane is the data plane's answer a policy's Programmed takes
// for the Gateway: the reason its configuration is held back, that the
// Gateway has none when it is not accepted, or what its data plane did
// with it (dp).
func policyDataPlane(gw types.NamespacedName, t *translate.Translation, published bool, dp status.DataPlane) status.DataPlane {
	switch {
	case t.HeldMessage() != "":
		return status.DataPlane{State: status.Pending, Message: t.HeldMessage()}
	case !published:
		return status.DataPlane{State: status.Pending, Message: "Gateway " + gw.String() + " is not accepted, so it has no data plane configuration"}
	}
	return dp
}

// policiesShowing are the policies of kinds whose status shows an entry of
// the controller for the Gateway gw (not one for a target not found).
func policiesShowing(ctx context.Context, c client.Reader, kinds []policy.Kind, controllerName string, gw types.NamespacedName) ([]graph.ObjectRef, error) {
	want := status.RefString(status.GatewayAncestor(gw))
	var out []graph.ObjectRef
	for _, kind := range kinds {
		list := kind.NewList()
		// The cache's own objects: only their statuses are read.
		if err := c.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing %s: %w", kind.Name(), err)
		}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			obj, ok := o.(client.Object)
			if !ok {
				return nil
			}
			for _, a := range kind.View(obj).PolicyStatus().Ancestors {
				if string(a.ControllerName) == controllerName && status.RefString(a.AncestorRef) == want && !status.IsTargetEntry(a) &&
					isGatewayRef(a.AncestorRef) {
					out = append(out, graph.ObjectRef{Kind: kind.Name(), Key: client.ObjectKeyFromObject(obj)})
					break
				}
			}
			return nil
		})
	}
	return out, nil
}

// isGatewayRef says whether an ancestor reference is a Gateway's.
func isGatewayRef(ref gatewayv1.ParentReference) bool {
	return ref.Kind != nil && *ref.Kind == "Gateway" && (ref.Group == nil || *ref.Group == gatewayv1.GroupName)
}

// policyVersionChanged passes a policy's creation, deletion, and changes
// of its version (graph.PolicyVersion: its generation, and what
// translation reads of its status).
func policyVersionChanged(k policy.Kind) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld == nil || e.ObjectNew == nil || graph.PolicyVersion(k.Name(), e.ObjectOld) != graph.PolicyVersion(k.Name(), e.ObjectNew)
	}}
}
