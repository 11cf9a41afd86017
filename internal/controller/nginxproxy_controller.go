package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/userevents"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=nginxproxies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=nginxproxies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// NginxProxyReconciler re-validates NginxProxies and reports the result in
// their status; an invalid NginxProxy also gets a Warning Event.
type NginxProxyReconciler struct {
	client.Client
	Recorder events.EventRecorder
}

// Reconcile handles one NginxProxy.
func (r *NginxProxyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	np := &v1alpha2.NginxProxy{}
	if err := r.Get(ctx, req.NamespacedName, np); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cond := metav1.Condition{
		Type:               "Accepted",
		Status:             metav1.ConditionTrue,
		Reason:             "Accepted",
		Message:            "NginxProxy is accepted",
		ObservedGeneration: np.Generation,
	}
	if reason, unreadable := np.Annotations[graph.UnreadableAnnotation]; unreadable {
		ref := graph.ObjectRef{Kind: "NginxProxy", Key: req.NamespacedName}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Invalid", graph.UnreadableMessage(ref, reason)
	} else if errs := validation.NginxProxy(np); len(errs) > 0 {
		msg := fmt.Sprintf("NginxProxy is invalid and is ignored: %s", errs.ToAggregate())
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Invalid", msg
	}
	orig := np.DeepCopy()
	if !meta.SetStatusCondition(&np.Status.Conditions, cond) {
		return ctrl.Result{}, nil
	}
	err := r.Status().Patch(ctx, np, client.MergeFrom(orig))
	statuswrite.Count(np, err)
	if err == nil && cond.Status == metav1.ConditionFalse {
		// Once per change of the verdict, not once per reconcile.
		log.FromContext(ctx).Info("invalid NginxProxy", "message", cond.Message)
		userevents.Emit(r.Recorder, np, []userevents.Event{{Type: corev1.EventTypeWarning, Reason: "Invalid", Action: "Validate", Note: cond.Message}})
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// SetupWithManager registers the reconciler.
func (r *NginxProxyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha2.NginxProxy{}).
		Named("nginxproxy").
		Complete(r)
}
