package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/coalesce"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/snapshot"
	"github.com/gatewall/gatewall/internal/status"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/internal/userevents"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses;gateways;listenersets;httproutes;grpcroutes;tlsroutes;tcproutes;udproutes;referencegrants,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gatewayclasses/status;gateways/status;listenersets/status;httproutes/status;grpcroutes/status;tlsroutes/status;tcproutes/status;udproutes/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=services;secrets;namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch

// GatewayReconciler is the shared reconciler: one reconcile per Gateway reads
// what concerns the Gateway from the cache, builds its graph, renders its
// NGINX configuration, hands it to the data plane, and writes the Gateway's
// status and its routes' parent statuses.
type GatewayReconciler struct {
	client.Client
	Config    Config
	DataPlane dataplane.DataPlane
	// Provisioning, when set, makes the reconciler provision each accepted
	// Gateway's data plane; nil leaves data planes to someone else.
	Provisioning *Provisioning
	// RouteStatuses writes route statuses in the background.
	RouteStatuses *statuswrite.RouteWriter
	// PolicyStatuses writes policies' statuses in the background: the
	// reconciler hands each policy its entry for the Gateway.
	PolicyStatuses *statuswrite.PolicyWriter
	// statuses runs each Gateway's newest status job (handStatuses).
	statuses *coalesce.Jobs[types.NamespacedName]
	// lastStatuses are each Gateway's last status job that a data plane's
	// report repeats (repeatStatuses); statusesMu orders handing and
	// repeating jobs.
	statusesMu   sync.Mutex
	lastStatuses map[types.NamespacedName]func(context.Context) error
	// Recorder emits events on Gateways (nil: none).
	Recorder events.EventRecorder

	// dataPlaneEvents turns changes of data planes into events.
	dataPlaneEvents userevents.DataPlane
	// dataPlanePods says why data planes do not serve, from their pods.
	dataPlanePods dataPlanePods
	// wakes say which Gateways were queued by EndpointSlices alone
	// (refreshEndpoints); nil: none.
	wakes *wakes
}

// Reconcile handles one Gateway: it publishes the Gateway's configuration
// and hands the statuses to write to a background job, so that the next
// change of the Gateway is translated and pushed without waiting for the
// API server to take this one's statuses (at 5,000 routes, with the data
// plane testing and reloading on the same cores, those writes held the
// Gateway for 0.3-0.9 s after each push).
func (r *GatewayReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	start := time.Now()
	defer func() { logger.V(1).Info("Gateway reconciled", "took", time.Since(start).String()) }()
	defer r.Config.Translations.reconcilingGateway(req.NamespacedName)()
	if services, only := r.wakes.take(req.NamespacedName); only {
		if refreshed, err := r.refreshEndpoints(ctx, req.NamespacedName, services); refreshed || err != nil {
			return ctrl.Result{}, err
		}
	}
	gw := &gatewayv1.Gateway{}
	if err := r.Get(ctx, req.NamespacedName, gw); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.DataPlane.Forget(req.NamespacedName)
		r.forgetTranslation(req.NamespacedName)
		r.Config.Referenced.Forget(req.NamespacedName)
		r.dataPlaneEvents.Forget(req.NamespacedName)
		metrics.ForgetGateway(req.NamespacedName)
		return ctrl.Result{}, r.handStatuses(ctx, req.NamespacedName, false, func(ctx context.Context) error {
			return errors.Join(r.clearRouteStatuses(ctx, req.NamespacedName), r.handPolicyStatuses(ctx, req.NamespacedName, nil, status.DataPlane{}, nil))
		})
	}
	in, err := r.Config.reader(r.Client).Gateway(ctx, gw)
	if err != nil {
		return ctrl.Result{}, err
	}
	read := time.Now()
	t, statusesHanded := r.translate(in, req.NamespacedName)
	translated := time.Now()
	if t == nil {
		// Not (or no longer) a Gatewall Gateway: leave no state behind,
		// and no data plane serving it.
		r.DataPlane.Forget(req.NamespacedName)
		metrics.ForgetGateway(req.NamespacedName)
		if r.Provisioning != nil {
			if err := r.deprovision(ctx, gw); err != nil {
				return ctrl.Result{}, err
			}
		}
		policies := in.PolicyVersions()
		return ctrl.Result{}, r.handStatuses(ctx, req.NamespacedName, false, func(ctx context.Context) error {
			return errors.Join(r.clearRouteStatuses(ctx, req.NamespacedName), r.handPolicyStatuses(ctx, req.NamespacedName, nil, status.DataPlane{}, policies))
		})
	}
	g := t.Graph
	// A Gateway that is not valid (a bad NginxProxy edit, a broken
	// parametersRef, no valid listener) keeps its data plane and the last
	// good configuration published, so that it keeps serving, and pods that
	// start meanwhile get that configuration, until it is fixed (then
	// provisioned and published again) or deleted (its objects are then
	// garbage collected through their owner references; a Gateway being
	// deleted is not provisioned again meanwhile).
	prov := provisioned{addresses: gw.Status.Addresses}
	if r.Provisioning != nil && g.Valid && gw.DeletionTimestamp == nil {
		if prov, err = r.provision(ctx, g); err != nil {
			return ctrl.Result{}, err
		}
	}
	version, published := "", t.Files != nil
	if held := t.HeldMessage(); held != "" {
		logger.Info("Configuration held back", "why", held)
	}
	if published {
		r.DataPlane.PublishEndpoints(req.NamespacedName, t.Endpoints, t.Resolver, t.KeySources)
		version = r.DataPlane.Publish(req.NamespacedName, t.Files)
		recordConfiguration(req.NamespacedName, t)
		logger.V(1).Info("configuration published", "version", version, "routes", len(g.Routes),
			"snapshot", read.Sub(start).String(), "translation", translated.Sub(read).String(), "published", time.Since(start).String())
	}
	policies := in.PolicyVersions()
	// Policies get their entries now, not when the status job runs (it is
	// paced): the next translation reads a WAF policy's records of the
	// bundles in force that this one decides.
	dp := r.translationDataPlane(req.NamespacedName, t, published, version)
	r.handPolicyEntries(ctx, req.NamespacedName, t, policyDataPlane(req.NamespacedName, t, published, dp), policies)
	job := &statusJob{gw: gw, in: in, t: t, prov: prov, version: version, published: published, statusesHanded: statusesHanded,
		policies: policies}
	if err := r.handStatuses(ctx, req.NamespacedName, true, func(ctx context.Context) error { return r.writeStatuses(ctx, job) }); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: prov.retryAfter}, nil
}

// statusJob is what one reconcile leaves to write: the statuses of the
// Gateway, its ListenerSets and its routes, from its translation and what
// the data plane did with the version it published.
type statusJob struct {
	gw        *gatewayv1.Gateway
	in        *graph.Input
	t         *translate.Translation
	prov      provisioned
	version   string
	published bool
	// policies are the policies the input held, with their versions: the
	// Gateway decides their entries (none, for those its translation has
	// no outcome for).
	policies map[graph.ObjectRef]string
	// statusesHanded: the same input's route statuses were handed already
	// (by this job too, once it ran: repeating it skips them, and it lets go
	// of the snapshot, in, which only route statuses read).
	statusesHanded bool
}

// handStatuses has job run in the background, after (or instead of, when
// it has not started) the Gateway's previous one; without a runner (tests
// of parts of the reconciler) it runs at once. A repeatable job is the one
// a data plane's report runs again (repeatStatuses); one that is not (a
// Gateway gone, or no longer Gatewall's) ends the repeats.
func (r *GatewayReconciler) handStatuses(ctx context.Context, key types.NamespacedName, repeatable bool, job func(context.Context) error) error {
	if r.statuses == nil {
		return job(ctx)
	}
	r.statusesMu.Lock()
	defer r.statusesMu.Unlock()
	if r.lastStatuses == nil {
		r.lastStatuses = map[types.NamespacedName]func(context.Context) error{}
	}
	if repeatable {
		r.lastStatuses[key] = job
	} else {
		delete(r.lastStatuses, key)
	}
	r.statuses.Hand(key, job)
	return nil
}

// repeatStatuses hands the Gateway's last repeatable status job again; false
// when there is none (or no runner).
func (r *GatewayReconciler) repeatStatuses(key types.NamespacedName) bool {
	if r.statuses == nil {
		return false
	}
	r.statusesMu.Lock()
	defer r.statusesMu.Unlock()
	job, ok := r.lastStatuses[key]
	if ok {
		r.statuses.Hand(key, job)
	}
	return ok
}

// writeStatuses writes a reconcile's statuses: the data plane's state is
// read when the job runs, so a job that waited reports the newest answer.
func (r *GatewayReconciler) writeStatuses(ctx context.Context, j *statusJob) error {
	key, g, t := client.ObjectKeyFromObject(j.gw), j.t.Graph, j.t
	dp := r.translationDataPlane(key, t, j.published, j.version)
	policiesDP := policyDataPlane(key, t, j.published, dp)
	if dp.State == status.Failed {
		// NGINX names the file that failed; the Gateway's status and its
		// ApplyFailed event name the object it came from too.
		dp.Message = t.NameFiles(dp.Message)
	}
	pods := ""
	if dp.State != status.Applied {
		// Why no pod applied it, from the pods themselves: a user reading
		// the Gateway alone can act.
		problems, notReady, err := r.podProblems(ctx, j.gw)
		if err != nil {
			log.FromContext(ctx).Error(err, "Reading the data plane's pods")
		}
		if notReady {
			r.dataPlanePods.recheck(key, r.repeatStatuses)
		}
		if pods = problems; pods != "" {
			if dp.State == status.Unknown {
				// A manager that just started waits for pods to connect
				// before saying anything; these pods will not.
				dp = status.DataPlane{State: status.Pending, Message: "no data plane pod of the Gateway serves"}
			}
			dp.Message += "; the data plane's pods: " + pods
		}
	}
	now := metav1.Now()
	if len(j.prov.notes) > 0 {
		// The patches left out are named with the rest of the NginxProxy
		// the data plane does not carry out (g is the translation's: a copy).
		withNotes := *g
		withNotes.NotProgrammed = append(slices.Clone(g.NotProgrammed), j.prov.notes...)
		g = &withNotes
	}
	if err := r.writeGatewayStatus(ctx, g, dp, j.prov.addresses, j.prov.problem, t.Extra(t.GatewayRef()), now); err != nil {
		return err
	}
	stalled := j.prov.stalled
	if pods != "" {
		stalled = strings.TrimPrefix(stalled+"; the data plane's pods: "+pods, "; ")
	}
	userevents.Emit(r.Recorder, j.gw, r.dataPlaneEvents.Observe(key, dp, j.prov.problem, stalled, t.HeldMessage()))
	owner := statuswrite.ParentOwner{ControllerName: r.Config.ControllerName, Gateway: key, Sets: map[types.NamespacedName]bool{}}
	for _, ls := range g.ListenerSets {
		owner.Sets[ls.Key] = true
		if err := r.writeListenerSetStatus(ctx, ls, dp, now); err != nil {
			return err
		}
	}
	if err := r.handPolicyStatuses(ctx, key, t, policiesDP, j.policies); err != nil {
		return err
	}
	if j.statusesHanded {
		// The same input makes the same route statuses, and the writer has
		// them already: thousands of routes need not be gone through again.
		return nil
	}
	current := map[graph.ObjectRef]bool{}
	for _, route := range g.Routes {
		current[translate.RouteRef(route)] = true
		have := routekind.Parents(newest(j.in, route))
		parents := status.RouteParents(route, r.Config.ControllerName, t.Extra(translate.RouteRef(route)), have, now)
		r.RouteStatuses.SetChanged(route.Source, owner, parents, have)
	}
	if err := r.clearRouteStatusesBut(ctx, owner, current); err != nil {
		return err
	}
	r.routeStatusesHanded(key, t)
	// One Gateway's jobs never run at once, so the job may note this for
	// when a data plane's report runs it again.
	j.statusesHanded, j.in = true, nil
	return nil
}

// clearRouteStatuses removes the parent statuses Gatewall wrote for a
// Gateway that is gone or no longer Gatewall's, and for the ListenerSets
// that name it, from every route.
func (r *GatewayReconciler) clearRouteStatuses(ctx context.Context, gw types.NamespacedName) error {
	owner := statuswrite.ParentOwner{ControllerName: r.Config.ControllerName, Gateway: gw, Sets: map[types.NamespacedName]bool{}}
	if r.Config.served(apis.ListenerSet) {
		sets := &gatewayv1.ListenerSetList{}
		if err := r.List(ctx, sets, client.MatchingFields{snapshot.IndexListenerSetGateway: gw.String()}); err != nil {
			return fmt.Errorf("listing ListenerSets: %w", err)
		}
		for _, ls := range sets.Items {
			owner.Sets[client.ObjectKeyFromObject(&ls)] = true
		}
	}
	return r.clearRouteStatusesBut(ctx, owner, nil)
}

// clearRouteStatusesBut has the route status writer clear owner's parent
// statuses from every route that may hold one, except those in keep.
func (r *GatewayReconciler) clearRouteStatusesBut(ctx context.Context, owner statuswrite.ParentOwner, keep map[graph.ObjectRef]bool) error {
	return eachRouteBut(ctx, r.Client, r.Config.routeKinds(), keep, routeQueries(owner), func(route client.Object) error {
		r.RouteStatuses.Set(route, owner, nil)
		return nil
	})
}

// routeQueries find the routes that may hold an owner's parent statuses.
func routeQueries(owner statuswrite.ParentOwner) []client.MatchingFields {
	qs := []client.MatchingFields{{snapshot.IndexRouteGateway: owner.Gateway.String()}}
	for k := range owner.Sets {
		qs = append(qs, client.MatchingFields{snapshot.IndexRouteListenerSet: k.String()})
	}
	return qs
}

// gatewayWorkers reconcile different Gateways at once (one Gateway is never
// reconciled twice at once): a change to a route with many parents, or a
// restart, reaches every Gateway in parallel instead of one after another.
// What the reconciles share (the agent server, the bundles, the notifier,
// the route status writer, the translations) is safe for concurrent use.
// As many status jobs write different Gateways' statuses at once: each
// waits on the API server (make scale's 20 Gateways took 0.1-0.8 s each,
// so with 4 at once the last Gateway's status came 4 s after the first).
const gatewayWorkers = 8

// gatewayStatusPace and gatewayStatusMaxPause space one Gateway's status
// jobs (see jobs.pace): after a job that took d, the Gateway's next one
// starts pace×d later at the earliest, at most the maximum. A small
// Gateway's job takes milliseconds, so its statuses follow each change; at
// make scale's 64 listeners under a change a second, each Gateway status
// write took the API server 0.5-0.8 s of CPU, and writing it after every
// change kept a third of the two cores busy while NGINX reloaded.
const (
	gatewayStatusPace     = 3
	gatewayStatusMaxPause = 5 * time.Second
)

// SetupWithManager registers the reconciler, its indexes and its watches.
func (r *GatewayReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := setupIndexes(context.Background(), mgr, r.Config); err != nil {
		return err
	}
	if !r.Config.TranslateEndpointChanges {
		r.wakes = newWakes()
	}
	// Gateways and routes matter when their spec changes; their status is Gatewall's own writing.
	b := ctrl.NewControllerManagedBy(mgr).For(&gatewayv1.Gateway{}, builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	if r.Provisioning != nil {
		// Drift in a data plane's objects, and its Service's address, reconcile the Gateway.
		for _, k := range provisioner.Kinds {
			b = b.Owns(k.Object())
		}
	}
	c, err := r.watches(b).
		Named("gateway").
		WithOptions(controller.Options{MaxConcurrentReconciles: gatewayWorkers, NewQueue: r.wakes.queue(mgr.GetLogger())}).
		Build(r)
	if err != nil {
		return err
	}
	return r.optionalWatches(mgr, c)
}
