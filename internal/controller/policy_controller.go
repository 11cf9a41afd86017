package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// PolicyReconciler owns the status of one kind of policy.Kinds: per
// ancestor Gateway, Accepted and Programmed. It translates each ancestor
// Gateway with the same pure functions as the Gateway reconciler, so both
// agree, and asks the data plane whether it applied that configuration.
type PolicyReconciler struct {
	client.Client
	Kind      policy.Kind
	Config    Config
	DataPlane DataPlane
	Recorder  events.EventRecorder
}

// Reconcile handles one policy of the kind.
func (r *PolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := r.Kind.NewObject()
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	targets := policy.TargetsOf(p, p.PolicyTargetRefs())
	tin, translations, dataPlane, err := policyTranslations(ctx, r.Client, r.Config, r.DataPlane, targets)
	if err != nil {
		return ctrl.Result{}, err
	}
	ancestors := translate.PolicyAncestors(translate.KindOutcomes(r.Kind), p, translations, tin, dataPlane)
	return ctrl.Result{}, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := r.Kind.NewObject()
		if err := r.Get(ctx, req.NamespacedName, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		st := cur.PolicyStatus()
		want := status.PolicyStatus(ancestors, r.Config.ControllerName, *st, metav1.Now())
		if equality.Semantic.DeepEqual(*st, want) {
			return nil
		}
		evs := policyEvents(st.Ancestors, want.Ancestors)
		*st = want
		if err := updateStatus(ctx, r, cur); err != nil {
			return fmt.Errorf("updating status of %s %s: %w", r.Kind.Name(), req.NamespacedName, err)
		}
		emit(r.Recorder, cur, evs)
		return nil
	})
}

// SetupWithManager registers the reconciler. Any change to a Gateway, a
// route, another policy or (for policies on Services) a Service can change
// a policy's outcome (conflicts, inherited settings, ancestors), so those
// events re-reconcile every policy of the kind; policies are few.
func (r *PolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.NewObject(), spec).
		Watches(r.Kind.NewObject(), all, spec).
		Watches(&gatewayv1.Gateway{}, all, spec).
		Watches(&gatewayv1.HTTPRoute{}, all, spec).
		Watches(&gatewayv1.GRPCRoute{}, all, spec)
	if r.Kind.Targets().Allow(gatewayv1.LocalPolicyTargetReference{Kind: "Service"}) {
		// A Service's existence and ports decide whether it is found and
		// which Gateways proxy to it.
		b = b.Watches(&corev1.Service{}, all)
	}
	if r.Config.Notifier != nil {
		b = b.WatchesRawSource(r.Config.Notifier.GatewaySource(r.allPolicies,
			policiesOfGateway(r.Client, r.Config, r.Kind.NewList)))
	}
	return b.Named(strings.ToLower(r.Kind.Name())).Complete(r)
}

func (r *PolicyReconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	return requestsForAll(ctx, r.Client, r.Kind.NewList())
}
