package controller

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/api/plm"
	appprotectv1 "github.com/gatewall/gatewall/api/plm/appprotect/v1"
	wafv1alpha1 "github.com/gatewall/gatewall/api/plm/waf/v1alpha1"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/translate"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=wafgatewaybindingpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=wafgatewaybindingpolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=appprotect.f5.com;waf.f5.com,resources=appolicies;aplogconfs,verbs=get;list;watch

// WAFGatewayBindingPolicyReconciler owns the status of
// WAFGatewayBindingPolicies: per ancestor Gateway, Accepted, ResolvedRefs and
// Programmed, and the bundles in force (apPolicyStatus, apLogConfStatus).
type WAFGatewayBindingPolicyReconciler struct {
	client.Client
	Config    Config
	DataPlane DataPlane
	Recorder  events.EventRecorder
}

// Reconcile handles one WAFGatewayBindingPolicy.
func (r *WAFGatewayBindingPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &v1alpha1.WAFGatewayBindingPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	targets := policy.TargetsOf(p, p.Spec.TargetRefs)
	tin, translations, dataPlane, err := policyTranslations(ctx, r.Client, r.Config, r.DataPlane, targets)
	if err != nil {
		return ctrl.Result{}, err
	}
	ancestors := translate.PolicyAncestors(translate.WAFOutcomes, p, translations, tin, dataPlane)
	return ctrl.Result{}, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.WAFGatewayBindingPolicy{}
		if err := r.Get(ctx, req.NamespacedName, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := translate.WAFStatus(req.NamespacedName, ancestors, translations, tin, cur.Status, metav1.Now())
		if equality.Semantic.DeepEqual(cur.Status, want) {
			return nil
		}
		evs := policyEvents(cur.Status.Ancestors, want.Ancestors)
		cur.Status = want
		if err := updateStatus(ctx, r, cur); err != nil {
			return fmt.Errorf("updating status of WAFGatewayBindingPolicy %s: %w", req.NamespacedName, err)
		}
		emit(r.Recorder, cur, evs)
		return nil
	})
}

// SetupWithManager registers the reconciler. Gateways, routes, NginxProxies,
// ReferenceGrants, other WAF policies, PLM objects (only when their bundle or
// processing status changes) and fetched bundles can all change a policy's
// outcome; such events re-reconcile every WAF policy (they are few).
func (r *WAFGatewayBindingPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.WAFGatewayBindingPolicy{}, spec).
		Watches(&v1alpha1.WAFGatewayBindingPolicy{}, all, spec).
		Watches(&gatewayv1.Gateway{}, all, spec).
		Watches(&gatewayv1.HTTPRoute{}, all, spec).
		Watches(&gatewayv1.GRPCRoute{}, all, spec).
		Watches(&v1alpha2.NginxProxy{}, all, spec).
		Watches(&gatewayv1beta1.ReferenceGrant{}, all)
	for _, obj := range plmObjects(r.Config.PLMGroup) {
		b = b.Watches(obj, all, builder.WithPredicates(PLMStatusChanged()))
	}
	if r.Config.Notifier != nil {
		b = b.WatchesRawSource(r.Config.Notifier.GatewaySource(r.allPolicies,
			policiesOfGateway(r.Client, r.Config, func() client.ObjectList { return &v1alpha1.WAFGatewayBindingPolicyList{} })))
	}
	return b.Named("wafgatewaybindingpolicy").Complete(r)
}

func (r *WAFGatewayBindingPolicyReconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	return requestsForAll(ctx, r.Client, &v1alpha1.WAFGatewayBindingPolicyList{})
}

// plmObjects are the PLM kinds of a group, to watch.
func plmObjects(group string) []client.Object {
	switch group {
	case appprotectv1.GroupVersion.Group:
		return []client.Object{&appprotectv1.APPolicy{}, &appprotectv1.APLogConf{}}
	case wafv1alpha1.GroupVersion.Group:
		return []client.Object{&wafv1alpha1.APPolicy{}, &wafv1alpha1.APLogConf{}}
	}
	return nil
}

// plmStatus returns a PLM object's status.
func plmStatus(o client.Object) *plm.Status {
	switch o := o.(type) {
	case *appprotectv1.APPolicy:
		return &o.Status
	case *appprotectv1.APLogConf:
		return &o.Status
	case *wafv1alpha1.APPolicy:
		return &o.Status
	case *wafv1alpha1.APLogConf:
		return &o.Status
	}
	return nil
}

// PLMStatusChanged passes creations, deletions, and updates that change a PLM
// object's status.bundle (state, location, sha256) or status.processing
// (datetime, errors); nothing else of a PLM object matters to Gatewall.
func PLMStatusChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			a, b := plmStatus(e.ObjectOld), plmStatus(e.ObjectNew)
			if a == nil || b == nil {
				return true
			}
			ka, kb := bundleKeyOf(a), bundleKeyOf(b)
			return ka.bundle != kb.bundle || ka.datetime != kb.datetime || !slices.Equal(ka.errors, kb.errors)
		},
	}
}

// bundleKey is the part of a PLM status Gatewall reacts to.
type bundleKey struct {
	bundle   [3]string // state, location, sha256
	datetime string
	errors   []string
}

func bundleKeyOf(s *plm.Status) bundleKey {
	var k bundleKey
	if b := s.Bundle; b != nil {
		k.bundle = [3]string{b.State, b.Location, b.Sha256}
	}
	if p := s.Processing; p != nil {
		k.datetime, k.errors = p.Datetime, p.Errors
	}
	return k
}
