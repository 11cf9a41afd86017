package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=wafgatewaybindingpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=wafgatewaybindingpolicies/status,verbs=get;update;patch

// WAFGatewayBindingPolicyReconciler owns the status of WAFGatewayBindingPolicys.
type WAFGatewayBindingPolicyReconciler struct {
	client.Client
	Recorder events.EventRecorder
}

// Reconcile handles one WAFGatewayBindingPolicy.
func (r *WAFGatewayBindingPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &v1alpha1.WAFGatewayBindingPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if errs := validation.WAFGatewayBindingPolicy(p); len(errs) > 0 {
		r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "Invalid", "Validate",
			"WAFGatewayBindingPolicy is invalid and is ignored: %s", errs.ToAggregate())
		log.FromContext(ctx).Info("invalid WAFGatewayBindingPolicy", "errors", errs.ToAggregate().Error())
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler.
func (r *WAFGatewayBindingPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.WAFGatewayBindingPolicy{}).
		Named("wafgatewaybindingpolicy").
		Complete(r)
}
