package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/snapshot"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=authenticationfilters,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=authenticationfilters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=snippetsfilters,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=snippetsfilters/status,verbs=get;update;patch

// FilterReconciler writes the status of the filters of one kind of
// graph.ExtensionFilterKinds (AuthenticationFilter, SnippetsFilter). A filter's verdict
// depends on the filter and the Secrets it reads only, not on a Gateway:
// the graph resolves it (graph.ResolveExtensionFilter), package status
// decides its conditions, statuswrite writes them. The Gateways whose
// rules use the filter are translated by the Gateway reconciler, which
// watches filters and their Secrets too.
type FilterReconciler struct {
	client.Client
	Config Config
	Kind   *graph.ExtensionFilterKind
}

// Reconcile handles one filter.
func (r *FilterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ref := graph.ObjectRef{Kind: r.Kind.Kind, Key: req.NamespacedName}
	o := r.Kind.New()
	if err := r.Get(ctx, req.NamespacedName, o); err != nil {
		if apierrors.IsNotFound(err) {
			r.Config.Referenced.ForgetReader(ref)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	in := graph.NewInput(r.Config.ControllerName)
	in.Snippets = r.Config.Snippets
	in.Add(o)
	// Secrets are cached as metadata only: their content comes from the
	// API server, kept while the filter's last reconcile read it.
	secrets, err := r.Config.Referenced.Secrets(ctx, ref, r.Kind.Secrets(o))
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the Secrets of %s: %w", ref, err)
	}
	for _, s := range secrets {
		in.Add(s)
	}
	ef := graph.ResolveExtensionFilter(in, r.Kind.Kind, req.NamespacedName)
	now := metav1.Now()
	err = statuswrite.WriteStatus(ctx, r.Client, req.NamespacedName, r.Kind.New, func(fresh client.Object) bool {
		if fresh.GetGeneration() != o.GetGeneration() {
			return false // changed since it was resolved: its own reconcile writes
		}
		have := r.Kind.Controllers(fresh)
		want := status.ExtensionFilter(ef, r.Config.ControllerName, fresh.GetGeneration(), *have, now)
		if equality.Semantic.DeepEqual(*have, want) {
			return false
		}
		*have = want
		return true
	})
	return ctrl.Result{}, err
}

// SetupWithManager registers the reconciler: the filters of its kind, and
// the Secrets they read (whose metadata only is cached).
func (r *FilterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(r.Kind.New(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.filtersOfSecret), builder.OnlyMetadata).
		Named(strings.ToLower(r.Kind.Kind)).
		Complete(r)
}

// filtersOfSecret are the filters of the reconciler's kind that read a Secret.
func (r *FilterReconciler) filtersOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	list := r.Kind.NewList()
	secret := snapshot.NsName(o.GetNamespace(), o.GetName())
	if err := r.List(ctx, list, client.MatchingFields{snapshot.IndexFilterSecret: secret}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the filters of a Secret", "secret", secret)
		return nil
	}
	var reqs []reconcile.Request
	for _, f := range r.Kind.Items(list) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(f)})
	}
	return reqs
}
