package controller

import (
	"context"
	"fmt"

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

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=proxysettingspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=proxysettingspolicies/status,verbs=get;update;patch

// ProxySettingsPolicyReconciler owns the status of ProxySettingsPolicies: per
// ancestor Gateway, Accepted and Programmed. It translates each ancestor
// Gateway with the same pure functions as the Gateway reconciler, so both
// agree, and asks the data plane whether it applied that configuration.
type ProxySettingsPolicyReconciler struct {
	client.Client
	Config    Config
	DataPlane DataPlane
	Recorder  events.EventRecorder
}

// Reconcile handles one ProxySettingsPolicy.
func (r *ProxySettingsPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &v1alpha1.ProxySettingsPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	targets := policy.TargetsOf(p, p.Spec.TargetRefs)
	tin, translations, dataPlane, err := policyTranslations(ctx, r.Client, r.Config, r.DataPlane, targets)
	if err != nil {
		return ctrl.Result{}, err
	}
	ancestors := translate.PolicyAncestors(translate.ProxySettingsOutcomes, req.NamespacedName, p.Generation, targets, translations, tin, dataPlane)
	return ctrl.Result{}, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.ProxySettingsPolicy{}
		if err := r.Get(ctx, req.NamespacedName, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := status.PolicyStatus(ancestors, r.Config.ControllerName, cur.Status, metav1.Now())
		if equality.Semantic.DeepEqual(cur.Status, want) {
			return nil
		}
		evs := policyEvents(cur.Status.Ancestors, want.Ancestors)
		cur.Status = want
		if err := updateStatus(ctx, r, cur); err != nil {
			return fmt.Errorf("updating status of ProxySettingsPolicy %s: %w", req.NamespacedName, err)
		}
		emit(r.Recorder, cur, evs)
		return nil
	})
}

// SetupWithManager registers the reconciler. Any change to a Gateway, a
// route or another policy can change a policy's outcome (conflicts,
// inherited settings), so those events re-reconcile every policy; policies
// are few.
func (r *ProxySettingsPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.ProxySettingsPolicy{}, spec).
		Watches(&v1alpha1.ProxySettingsPolicy{}, all, spec).
		Watches(&gatewayv1.Gateway{}, all, spec).
		Watches(&gatewayv1.HTTPRoute{}, all, spec).
		Watches(&gatewayv1.GRPCRoute{}, all, spec)
	if r.Config.Notifier != nil {
		b = b.WatchesRawSource(r.Config.Notifier.GatewaySource(r.allPolicies,
			policiesOfGateway(r.Client, r.Config, func() client.ObjectList { return &v1alpha1.ProxySettingsPolicyList{} })))
	}
	return b.Named("proxysettingspolicy").Complete(r)
}

func (r *ProxySettingsPolicyReconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	return requestsForAll(ctx, r.Client, &v1alpha1.ProxySettingsPolicyList{})
}
