package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/translate"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=backendtlspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=backendtlspolicies/status,verbs=get;update;patch

// BackendTLSPolicyReconciler owns, for Gatewall's Gateways, the status of
// BackendTLSPolicies: Accepted and ResolvedRefs per Gateway whose routes
// reach a target Service. The Gateway reconciler applies the policies to
// backends with the same pure evaluation.
type BackendTLSPolicyReconciler struct {
	client.Client
	Config Config
	// Recorder emits events on policies (nil: none).
	Recorder events.EventRecorder
}

// Reconcile handles one BackendTLSPolicy.
func (r *BackendTLSPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &gatewayv1.BackendTLSPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	in := graph.NewInput(r.Config.ControllerName)
	if err := addBackendTLSPolicies(ctx, r.Client, r.Config, in); err != nil {
		return ctrl.Result{}, err
	}
	outcome := graph.BackendTLSPolicyOutcome(in, p)
	candidates, err := r.candidates(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The Gateways that proxy to a target, decided on their translations
	// by the same function as the render command's.
	translations, _, err := translateGateways(ctx, r.Client, r.Config, candidates)
	if err != nil {
		return ctrl.Result{}, err
	}
	gateways := translate.BackendTLSAncestors(p, translations)
	return ctrl.Result{}, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &gatewayv1.BackendTLSPolicy{}
		if err := r.Get(ctx, req.NamespacedName, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		want := status.BackendTLSPolicy(gateways, outcome.Conditions, r.Config.ControllerName, cur.Generation, cur.Status, metav1.Now())
		if equality.Semantic.DeepEqual(cur.Status, want) {
			return nil
		}
		evs := policyEvents(cur.Status.Ancestors, want.Ancestors)
		cur.Status = want
		if err := updateStatus(ctx, r, cur); err != nil {
			return fmt.Errorf("updating status of BackendTLSPolicy %s: %w", req.NamespacedName, err)
		}
		emit(r.Recorder, cur, evs)
		return nil
	})
}

// candidates are the Gateways of Gatewall's classes that routes whose
// backendRefs or mirrors name a target Service have as parents: the only
// Gateways that can be ancestors.
func (r *BackendTLSPolicyReconciler) candidates(ctx context.Context, p *gatewayv1.BackendTLSPolicy) ([]types.NamespacedName, error) {
	var services []types.NamespacedName
	for _, t := range p.Spec.TargetRefs {
		if t.Group == "" && t.Kind == "Service" {
			services = append(services, types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)})
		}
	}
	return serviceGateways(ctx, r.Client, r.Config, services)
}

// gatewayIsOurs says whether a Gateway exists and its class is Gatewall's.
func gatewayIsOurs(ctx context.Context, c client.Reader, controllerName string, k types.NamespacedName) (bool, error) {
	if k.Name == "" {
		return false, nil
	}
	gw := &gatewayv1.Gateway{}
	if err := c.Get(ctx, k, gw); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	gc := &gatewayv1.GatewayClass{}
	if err := c.Get(ctx, types.NamespacedName{Name: string(gw.Spec.GatewayClassName)}, gc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return string(gc.Spec.ControllerName) == controllerName, nil
}

// SetupWithManager registers the reconciler. Other policies (conflicts),
// ConfigMaps (CA certificates), routes and Gateways (ancestors) change a
// policy's status, so their events re-reconcile every policy; policies are
// few.
func (r *BackendTLSPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		For(&gatewayv1.BackendTLSPolicy{}, spec).
		Watches(&gatewayv1.BackendTLSPolicy{}, all, spec).
		Watches(&gatewayv1.Gateway{}, all, spec).
		Watches(&gatewayv1.HTTPRoute{}, all, spec).
		Watches(&gatewayv1.GRPCRoute{}, all, spec).
		Watches(&corev1.ConfigMap{}, all)
	if r.Config.ListenerSets {
		b = b.Watches(&gatewayv1.ListenerSet{}, all, spec)
	}
	return b.Named("backendtlspolicy").Complete(r)
}

func (r *BackendTLSPolicyReconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	return requestsForAll(ctx, r.Client, &gatewayv1.BackendTLSPolicyList{})
}
