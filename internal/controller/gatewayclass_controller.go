package controller

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
)

// GatewayClassReconciler is part of the shared Gateway controller: it owns
// the status of GatewayClasses whose controllerName is Gatewall's (Accepted,
// supported features).
type GatewayClassReconciler struct {
	client.Client
	Config Config
}

// Reconcile handles one GatewayClass.
func (r *GatewayClassReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var readErr error
	err := statuswrite.WriteStatus(ctx, r.Client, req.NamespacedName, func() client.Object { return &gatewayv1.GatewayClass{} }, func(o client.Object) bool {
		gc := o.(*gatewayv1.GatewayClass)
		in := graph.NewInput(r.Config.ControllerName)
		in.Add(gc)
		if ref := gc.Spec.ParametersRef; ref != nil && ref.Namespace != nil {
			np := &v1alpha2.NginxProxy{}
			err := r.Get(ctx, client.ObjectKey{Namespace: string(*ref.Namespace), Name: ref.Name}, np)
			if readErr = client.IgnoreNotFound(err); readErr != nil {
				return false
			}
			if err == nil {
				in.Add(np)
			}
		}
		c := graph.BuildGatewayClass(in, gc.Name)
		if c == nil {
			return false // another controller's class
		}
		want := status.GatewayClass(c, status.SupportedFeatures(r.Config.APIs.Supports), gc.Status, metav1.Now())
		if equality.Semantic.DeepEqual(gc.Status, want) {
			return false
		}
		gc.Status = want
		return true
	})
	return ctrl.Result{}, errors.Join(readErr, err)
}

// SetupWithManager registers the reconciler.
func (r *GatewayClassReconciler) SetupWithManager(mgr ctrl.Manager) error {
	// The supported features follow what the cluster serves (APIs.Watch).
	served := make(chan event.GenericEvent, 1)
	r.Config.APIs.Watch(func() {
		select {
		case served <- event.GenericEvent{Object: &gatewayv1.GatewayClass{}}:
		default: // a pass over every class is pending already
		}
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&gatewayv1.GatewayClass{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha2.NginxProxy{}, handler.EnqueueRequestsFromMapFunc(r.classesOfNginxProxy)).
		WatchesRawSource(source.Channel(served, handler.EnqueueRequestsFromMapFunc(r.allClasses))).
		Named("gatewayclass").
		Complete(r)
}

// allClasses asks for every GatewayClass.
func (r *GatewayClassReconciler) allClasses(ctx context.Context, _ client.Object) []reconcile.Request {
	classes := &gatewayv1.GatewayClassList{}
	if err := r.List(ctx, classes); err != nil {
		log.FromContext(ctx).Error(err, "listing GatewayClasses")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(classes.Items))
	for _, c := range classes.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
	}
	return reqs
}

func (r *GatewayClassReconciler) classesOfNginxProxy(ctx context.Context, o client.Object) []reconcile.Request {
	classes := &gatewayv1.GatewayClassList{}
	if err := r.List(ctx, classes); err != nil {
		log.FromContext(ctx).Error(err, "listing GatewayClasses")
		return nil
	}
	var reqs []reconcile.Request
	for _, c := range classes.Items {
		ref := c.Spec.ParametersRef
		if ref != nil && ref.Kind == "NginxProxy" && ref.Name == o.GetName() && ref.Namespace != nil && string(*ref.Namespace) == o.GetNamespace() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
		}
	}
	return reqs
}
