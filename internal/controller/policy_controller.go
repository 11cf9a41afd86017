package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/internal/userevents"
)

// PolicyReconciler writes the status of one kind of policy.Kinds: per
// ancestor Gateway, Accepted, Programmed (and ResolvedRefs where the kind
// has references), and what a kind of policy.OwnStatus adds. It merges what
// the Gateway reconciler's translation of each ancestor Gateway decided for
// the policy (it translates nothing itself: a translation older than the
// policy is asked for again, and the policy's status waits for it) with
// what the data plane did with that translation's configuration.
type PolicyReconciler struct {
	client.Client
	Kind      policy.Kind
	Config    Config
	DataPlane dataplane.DataPlane
	Recorder  events.EventRecorder
}

// passRequest is the one request of a kind's reconciler: every event that
// may change a policy's outcome asks for a pass over all the kind's
// policies, and requests queued meanwhile are one.
var passRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "all"}}

// Reconcile brings every policy of the kind up to date in one pass. An
// event that may change one policy's outcome (a route, a Gateway, a
// data plane's report, a Gateway's new translation) mostly concerns all
// the policies of its Gateways. A pass looks up each Gateway's kept
// translation once and the policies share it. A policy that changed while
// the pass read it is reconciled in the next pass; errors are joined, and
// the pass retried with backoff.
func (r *PolicyReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	list := r.Kind.NewList()
	// The cache's own objects, not copies: a pass only reads them, and
	// writes a policy's status on a copy (reconcilePolicy).
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing %s: %w", r.Kind.Name(), err)
	}
	var objs []client.Object
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			objs = append(objs, obj)
		}
		return nil
	})
	slices.SortFunc(objs, func(a, b client.Object) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	pass := newPolicyPass()
	var errs []error
	staleAny, waitingAny := false, false
	for _, obj := range objs {
		stale, waiting, err := r.reconcilePolicy(ctx, obj, pass)
		staleAny, waitingAny = staleAny || stale, waitingAny || waiting
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case staleAny:
		return ctrl.Result{RequeueAfter: staleRequeue}, nil
	case waitingAny:
		// The Gateway reconciler's new translation wakes the pass
		// (Config.Translated); this is only a safety net.
		return ctrl.Result{RequeueAfter: waitingRequeue}, nil
	}
	return ctrl.Result{}, nil
}

// reconcilePolicy writes one policy's status from the translations of its
// ancestor Gateways (looked up once per pass); stale when the policy
// changed since it was read, waiting when a translation older than the
// policy was asked for again.
func (r *PolicyReconciler) reconcilePolicy(ctx context.Context, obj client.Object, pass *policyPass) (stale, waiting bool, err error) {
	key := client.ObjectKeyFromObject(obj)
	p := r.Kind.View(obj)
	ref := graph.ObjectRef{Kind: r.Kind.Name(), Key: key}
	tin, translations, dataPlane, waiting, err := policyTranslations(ctx, r.Client, r.Config, r.DataPlane,
		ref, graph.PolicyVersion(ref.Kind, obj), targetsOf(r.Kind, obj), pass)
	if err != nil {
		return false, false, fmt.Errorf("%s %s: %w", r.Kind.Name(), key, err)
	}
	if waiting {
		return false, true, nil
	}
	ancestors := translate.PolicyAncestors(r.Kind, p, translations, tin, dataPlane)
	withStatus := func(cur client.Object) client.Object {
		want := cur.DeepCopyObject().(client.Object)
		translate.SetPolicyStatus(r.Kind, r.Kind.View(want), ancestors, translations, tin, metav1.Now())
		return want
	}
	if equality.Semantic.DeepEqual(obj, withStatus(obj)) {
		// The policy as the pass read it shows its status already (a newer
		// one wakes another pass): nothing to read again or write.
		return false, false, nil
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := r.Kind.NewObject()
		if err := r.Get(ctx, key, cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		if cur.GetResourceVersion() != obj.GetResourceVersion() {
			// Changed since it was read (its status too: the WAF
			// bundle in force is read from it): writing what was decided
			// for the older object would overwrite the newer one. The
			// next pass decides again.
			stale = true
			return nil
		}
		want := withStatus(cur)
		if equality.Semantic.DeepEqual(cur, want) {
			return nil
		}
		evs := userevents.OfPolicy(r.Kind.View(cur).PolicyStatus().Ancestors, r.Kind.View(want).PolicyStatus().Ancestors)
		if err := statuswrite.Update(ctx, r, want); err != nil {
			return fmt.Errorf("updating status of %s %s: %w", r.Kind.Name(), key, err)
		}
		userevents.Emit(r.Recorder, want, evs)
		return nil
	})
	return stale, false, err
}

// staleRequeue is how soon a pass follows one in which a policy changed
// while it was read.
const staleRequeue = 10 * time.Millisecond

// waitingRequeue is how soon a pass follows one in which a policy waited
// for a Gateway's new translation, if that translation's notification has
// not brought it sooner.
const waitingRequeue = 30 * time.Second

// SetupWithManager registers the reconciler. Any change to a Gateway, a
// route, another policy, (for policies on Services) a Service, or an object
// of a kind the policy kind Reads can change a policy's outcome (conflicts,
// inherited settings, ancestors, references), so those events re-reconcile
// every policy of the kind; policies are few.
func (r *PolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(r.allPolicies)
	spec := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		Watches(r.Kind.NewObject(), all, spec).
		Watches(&gatewayv1.Gateway{}, all, spec).
		Watches(&gatewayv1.HTTPRoute{}, all, spec).
		Watches(&gatewayv1.GRPCRoute{}, all, spec)
	if r.Kind.Targets().Allow(gatewayv1.LocalPolicyTargetReference{Kind: "Service"}) {
		// A Service's existence and ports decide whether it is found and
		// which Gateways proxy to it.
		b = b.Watches(&corev1.Service{}, all)
	}
	readsPLM := false
	for _, kind := range r.Kind.Reads() {
		switch kind {
		case "NginxProxy":
			b = b.Watches(&v1alpha2.NginxProxy{}, all, spec)
		case "ReferenceGrant":
			b = b.Watches(&gatewayv1beta1.ReferenceGrant{}, all)
		case "ConfigMap", "Secret":
			// Only a ConfigMap or Secret a BackendTLSPolicy takes CAs from
			// (the one kind that reads them): tenants change theirs often.
			b = b.Watches(newMetadataOf(kind), handler.EnqueueRequestsFromMapFunc(r.policiesOfCA(kind)), builder.OnlyMetadata)
		case policy.KindAPPolicy, policy.KindAPLogConf:
			readsPLM = true // watched once PLM's CRDs are installed, below
		default:
			return fmt.Errorf("%s reads %s, which its reconciler cannot watch", r.Kind.Name(), kind)
		}
	}
	if r.Config.Notifier != nil {
		b = b.WatchesRawSource(r.Config.Notifier.GatewaySource(r.allPolicies,
			passOfGateway(policiesOfGateway(r.Client, r.Config, r.Kind))))
	}
	if r.Config.Translated != nil {
		b = b.WatchesRawSource(r.Config.Translated.GatewaySource(r.allPolicies,
			passOfGateway(policiesOfGateway(r.Client, r.Config, r.Kind))))
	}
	c, err := b.Named(strings.ToLower(r.Kind.Name())).Build(r)
	if err != nil {
		return err
	}
	late := optionalWatcher{mgr: mgr, c: c, apis: r.Config.APIs}
	// Routes attach to Gateways through ListenerSets.
	if err := late.watch(APIListenerSet, &gatewayv1.ListenerSet{}, all, predicate.GenerationChangedPredicate{}); err != nil {
		return err
	}
	if r.Kind.Targets().Allow(gatewayv1.LocalPolicyTargetReference{Kind: "Service"}) {
		// TLSRoutes, TCPRoutes and UDPRoutes passing to a Service make
		// their Gateways ancestors.
		for _, k := range routekind.Optional() {
			if err := late.watch(routeAPI(k), k.New(), all, predicate.GenerationChangedPredicate{}); err != nil {
				return err
			}
		}
	}
	if readsPLM {
		return late.watchPLM(r.Config, all)
	}
	return nil
}

// policiesOfCA is every policy of the kind when a BackendTLSPolicy takes
// CA certificates from the ConfigMap or Secret (kind), else none.
func (r *PolicyReconciler) policiesOfCA(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if !backendTLSCA(ctx, r.Client, o, kind) {
			return nil
		}
		return r.allPolicies(ctx, o)
	}
}

// newMetadataOf is an empty object of a core kind the policy reconcilers
// watch by metadata.
func newMetadataOf(kind string) client.Object {
	if kind == "Secret" {
		return &corev1.Secret{}
	}
	return &corev1.ConfigMap{}
}

// allPolicies asks for a pass over every policy of the kind.
func (r *PolicyReconciler) allPolicies(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{passRequest}
}

// passOfGateway asks for a pass when a Gateway's change concerns a policy
// of the kind.
func passOfGateway(policies func(context.Context, types.NamespacedName) []reconcile.Request) func(context.Context, types.NamespacedName) []reconcile.Request {
	return func(ctx context.Context, gw types.NamespacedName) []reconcile.Request {
		if len(policies(ctx, gw)) == 0 {
			return nil
		}
		return []reconcile.Request{passRequest}
	}
}
