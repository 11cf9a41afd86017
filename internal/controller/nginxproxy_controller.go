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

// NginxProxyReconciler writes the status package status decides for an
// NginxProxy (status.NginxProxy); an invalid NginxProxy also gets a
// Warning Event.
type NginxProxyReconciler struct {
	client.Client
	Recorder events.EventRecorder
}

// Reconcile handles one NginxProxy.
func (r *NginxProxyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var invalid *metav1.Condition
	var written *v1alpha2.NginxProxy
	err := statuswrite.WriteStatus(ctx, r.Client, req.NamespacedName, func() client.Object { return &v1alpha2.NginxProxy{} }, func(o client.Object) bool {
		np := o.(*v1alpha2.NginxProxy)
		want := status.NginxProxy(np, np.Status, metav1.Now())
		if equality.Semantic.DeepEqual(want, np.Status) {
			return false
		}
		np.Status = want
		if c := meta.FindStatusCondition(want.Conditions, "Accepted"); c != nil && c.Status == metav1.ConditionFalse {
			invalid, written = c, np
		} else {
			invalid, written = nil, nil
		}
		return true
	})
	if err == nil && invalid != nil {
		// Once per change of the status, not once per reconcile.
		log.FromContext(ctx).Info("invalid NginxProxy", "message", invalid.Message)
		userevents.Emit(r.Recorder, written, []userevents.Event{{Type: corev1.EventTypeWarning, Reason: "Invalid", Action: "Validate", Note: invalid.Message}})
	}
	return ctrl.Result{}, err
}

// SetupWithManager registers the reconciler.
func (r *NginxProxyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha2.NginxProxy{}).
		Named("nginxproxy").
		Complete(r)
}
