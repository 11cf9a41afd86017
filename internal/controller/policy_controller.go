package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/translate"
)

// PolicyReconciler hands the policy status writer what no Gateway decides
// of one kind of policy.Kinds: the entries for targets that are not of a
// kind the policy can have or do not exist, and (for a kind of
// policy.OwnStatus) the snapshot the rest of the status reads. Each
// Gateway's entry comes from the Gateway reconciler's translation of it,
// which hands it like route parents (writeStatuses): this reconciler
// translates nothing and waits for no translation.
type PolicyReconciler struct {
	client.Client
	Kind     policy.Kind
	Config   Config
	Statuses *statuswrite.PolicyWriter
}

// passRequest is the one request of a kind's reconciler: every event that
// may change what it hands asks for a pass over all the kind's policies,
// and requests queued meanwhile are one.
var passRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all"}}

// Reconcile hands the targets' entries of every policy of the kind, from
// one snapshot of their targets (with every policy and PLM object, for a
// kind of policy.OwnStatus: the bundles WAF policies report).
func (r *PolicyReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	list := r.Kind.NewList()
	// The cache's own objects, not copies: a pass only reads them.
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing %s: %w", r.Kind.Name(), err)
	}
	in := graph.NewInput(r.Config.ControllerName)
	_, own := r.Kind.(policy.OwnStatus)
	if own {
		snap := r.Config.reader(r.Client)
		snap.Settings(in)
		if err := snap.AddPolicies(ctx, in); err != nil {
			return ctrl.Result{}, err
		}
	}
	var errs []error
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(client.Object)
		if !ok {
			return nil
		}
		if err := addTargets(ctx, r.Client, r.Config, in, targetsOf(r.Kind, obj)); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.Kind.Name(), client.ObjectKeyFromObject(obj), err))
			return nil
		}
		e := &statuswrite.PolicyEntry{Ancestors: translate.TargetAncestors(r.Kind, r.Kind.View(obj), in)}
		if own {
			gws, err := existingGateways(ctx, r.Client, r.Config, in, targetsOf(r.Kind, obj))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", r.Kind.Name(), client.ObjectKeyFromObject(obj), err))
				return nil
			}
			ref := graph.ObjectRef{Kind: r.Kind.Name(), Key: client.ObjectKeyFromObject(obj)}
			e.Version, _ = in.PolicyVersionOf(ref)
			e.In, e.Gateways = in, gws
		}
		r.Statuses.Set(graph.ObjectRef{Kind: r.Kind.Name(), Key: client.ObjectKeyFromObject(obj)}, statuswrite.TargetsOwner, e)
		return nil
	})
	return ctrl.Result{}, errors.Join(errs...)
}

// SetupWithManager registers the reconciler. A policy's spec (and what
// translation reads of its status: policyVersionChanged), and the
// coming and going of what it may target (Gateways, routes, and for
// policies on Services, Services), change its targets' entries; for a
// kind that reads PLM's objects, their status changes the rest of its
// status.
func (r *PolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	existence := builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})
	b := ctrl.NewControllerManagedBy(mgr).
		Watches(r.Kind.NewObject(), all, builder.WithPredicates(policyVersionChanged(r.Kind))).
		Watches(&gatewayv1.Gateway{}, all, existence).
		Watches(&gatewayv1.HTTPRoute{}, all, existence).
		Watches(&gatewayv1.GRPCRoute{}, all, existence)
	if r.Kind.Targets().Allow(gatewayv1.LocalPolicyTargetReference{Kind: "Service"}) {
		b = b.Watches(&corev1.Service{}, all, existence)
	}
	c, err := b.Named(strings.ToLower(r.Kind.Name())).Build(r)
	if err != nil {
		return err
	}
	if slices.Contains(r.Kind.Reads(), policy.KindAPPolicy) || slices.Contains(r.Kind.Reads(), policy.KindAPLogConf) {
		late := optionalWatcher{mgr: mgr, c: c, apis: r.Config.APIs}
		return late.watchPLM(r.Config, all)
	}
	return nil
}

// allPolicies asks for a pass over every policy of the kind.
func (r *PolicyReconciler) allPolicies(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{passRequest}
}
