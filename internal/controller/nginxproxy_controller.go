package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/userevents"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=nginxproxies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=nginxproxies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// NginxProxyReconciler reports in NginxProxies' status whether they are
// valid and which of their settings the data plane does not carry out
// (status.NginxProxy); an invalid NginxProxy also gets a Warning Event.
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
	// Decided by package status from the object alone, as gatewall render
	// decides it.
	want := status.NginxProxy(np, np.Status.Conditions, metav1.Now())
	if equality.Semantic.DeepEqual(want, np.Status.Conditions) {
		return ctrl.Result{}, nil
	}
	orig := np.DeepCopy()
	was := invalidNginxProxy(orig.Status.Conditions)
	np.Status.Conditions = want
	err := r.Status().Patch(ctx, np, client.MergeFrom(orig))
	statuswrite.Count(np, err)
	if c := invalidNginxProxy(want); err == nil && c != nil && (was == nil || was.Message != c.Message) {
		// Once per change of the verdict, not once per reconcile.
		log.FromContext(ctx).Info("invalid NginxProxy", "message", c.Message)
		userevents.Emit(r.Recorder, np, []userevents.Event{{Type: corev1.EventTypeWarning, Reason: "Invalid", Action: "Validate", Note: c.Message}})
	}
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// invalidNginxProxy is the Accepted=False condition of a list, or nil.
func invalidNginxProxy(list []metav1.Condition) *metav1.Condition {
	c := meta.FindStatusCondition(list, status.NginxProxyAccepted)
	if c == nil || c.Status != metav1.ConditionFalse {
		return nil
	}
	return c
}

// SetupWithManager registers the reconciler.
func (r *NginxProxyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha2.NginxProxy{}).
		Named("nginxproxy").
		Complete(r)
}
