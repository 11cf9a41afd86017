package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/snapshot"
)

// BundleWarmer declares to the fetcher which WAF bundles to fetch: those of
// the WAFGatewayBindingPolicies that attach to a Gateway of Gatewall's
// classes (through a route, or a route's ListenerSet), and the bundles
// their statuses record in force. A policy of another installation, or one
// that targets nothing Gatewall serves, costs no fetch, no disk and no
// memory: anyone who can create a policy could otherwise fill them.
//
// It runs on every replica, not only the leader: each keeps its own cache
// warm, so a replica that becomes the leader has the bundles in force and
// needs no storage to push its first configurations.
type BundleWarmer struct {
	client.Client
	Config Config
}

// warmKey is the one request the warmer reconciles: every event recomputes
// the full set.
var warmKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "waf-bundles"}}

// Reconcile declares the bundles of the policies attached to Gatewall's Gateways.
func (w *BundleWarmer) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	in := graph.NewInput(w.Config.ControllerName)
	w.Config.reader(w.Client).Settings(in)
	return ctrl.Result{}, w.Config.Bundles.DeclareListed(in, func() error { return w.list(ctx, in) })
}

// list adds the ReferenceGrants, the PLM objects and the served policies.
func (w *BundleWarmer) list(ctx context.Context, in *graph.Input) error {
	lists := append([]client.ObjectList{&gatewayv1beta1.ReferenceGrantList{}}, snapshot.PLMLists(w.Config.plmGroup())...)
	for _, l := range lists {
		if err := snapshot.AddList(ctx, w.Client, in, l); err != nil {
			return err
		}
	}
	policies := &v1alpha1.WAFGatewayBindingPolicyList{}
	if err := w.List(ctx, policies); err != nil {
		return fmt.Errorf("listing WAFGatewayBindingPolicies: %w", err)
	}
	for i := range policies.Items {
		p := &policies.Items[i]
		served, err := w.served(ctx, p)
		if err != nil {
			return err
		}
		if served {
			in.Add(p)
		}
	}
	return nil
}

// served says whether a policy targets a Gateway of Gatewall's classes, or
// a route one of them is a parent of.
func (w *BundleWarmer) served(ctx context.Context, p *v1alpha1.WAFGatewayBindingPolicy) (bool, error) {
	gws, err := ancestorGateways(ctx, w.Client, w.Config, policy.TargetsOf(p, p.Spec.TargetRefs))
	if err != nil {
		return false, err
	}
	for _, gw := range gws {
		ours, err := gatewayIsOurs(ctx, w.Client, w.Config.ControllerName, gw)
		if err != nil || ours {
			return ours, err
		}
	}
	return false, nil
}

// oneShot enqueues req once when the controller starts: the warmer declares
// (and prunes) even when no watched object exists.
func oneShot(req reconcile.Request) source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(req)
		return nil
	})
}

// SetupWithManager registers the warmer, on every replica. What changes
// which policies are served (policies, their targets, Gateways and their
// classes) or which bundles they want (PLM objects' statuses, grants, the
// policies' own statuses) wakes it.
func (w *BundleWarmer) SetupWithManager(mgr ctrl.Manager) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{warmKey}
	})
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("waf-bundles").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 1}).
		WatchesRawSource(oneShot(warmKey)).
		Watches(&v1alpha1.WAFGatewayBindingPolicy{}, one).
		Watches(&gatewayv1beta1.ReferenceGrant{}, one).
		Watches(&gatewayv1.GatewayClass{}, one, spec).
		Watches(&gatewayv1.Gateway{}, one, spec).
		Watches(&gatewayv1.HTTPRoute{}, one, spec).
		Watches(&gatewayv1.GRPCRoute{}, one, spec).
		Build(w)
	if err != nil {
		return err
	}
	late := optionalWatcher{mgr: mgr, c: c, apis: w.Config.APIs}
	if err := late.watch(apis.ListenerSet, &gatewayv1.ListenerSet{}, one, predicate.GenerationChangedPredicate{}); err != nil {
		return err
	}
	return late.watchPLM(w.Config, one)
}
