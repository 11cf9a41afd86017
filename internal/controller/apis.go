package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/status"
)

// API is an optional API Gatewall uses when the cluster serves it: its CRD
// may be installed before the manager starts or at any time after.
type API string

// The optional APIs.
const (
	// APIPLM is PLM's APPolicy and APLogConf (PLMGroup says in which group).
	APIPLM API = "PLM"
	// APIListenerSet is the Gateway API's ListenerSet.
	APIListenerSet API = "ListenerSet"
	// APIBackendTLSPolicy is the Gateway API's BackendTLSPolicy.
	APIBackendTLSPolicy API = "BackendTLSPolicy"
)

// OptionalAPIs are the optional APIs, in the order they are enabled: the
// optional route kinds of routekind.Kinds have an API each, named after
// the kind (routeAPI).
var OptionalAPIs = optionalAPIs()

func optionalAPIs() []API {
	apis := []API{APIPLM}
	for _, k := range routekind.Optional() {
		apis = append(apis, routeAPI(k))
	}
	return append(apis, APIListenerSet, APIBackendTLSPolicy)
}

// RouteKindOf is the route kind of an optional API; nil for the others.
func RouteKindOf(api API) *routekind.Kind {
	if k := routekind.Named(string(api)); k != nil && k.Optional {
		return k
	}
	return nil
}

// APIs says which optional APIs the cluster serves, and sets up what uses
// one when its CRD appears after the manager started: indexes, watches and
// controllers register with When, and Serve runs them. An API stays served
// once it is (a CRD removed later is not followed). Safe for concurrent
// use; the nil APIs serves none.
type APIs struct {
	mu     sync.Mutex
	served map[API]bool
	// fields are the optional fields of the Gateway API's CRDs the cluster
	// serves (status.Fields), as the manager last found them.
	fields   map[status.Requirement]bool
	watchers []func()
	plmGroup string
	waiting  map[API][]func() error
	log      logr.Logger
	// changed is called after an API became served late (Notify wakes the
	// reconcilers, whose statuses said it was missing).
	changed func()
}

// NewAPIs returns APIs serving none yet; changed (may be nil) is called
// after an API becomes served once the manager runs.
func NewAPIs(log logr.Logger, changed func()) *APIs {
	return &APIs{served: map[API]bool{}, waiting: map[API][]func() error{}, log: log, changed: changed}
}

// Served says whether the cluster serves the API.
func (a *APIs) Served(api API) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served[api]
}

// PLMGroup is the API group of the PLM objects in use, "" until one is served.
func (a *APIs) PLMGroup() string {
	if a == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.plmGroup
}

// When runs use at once if the API is served, else when it becomes so.
// Uses of one API run in the order they were registered: register an
// index before what lists by it.
func (a *APIs) When(api API, use func() error) error {
	if a == nil {
		return nil // serves none, ever
	}
	a.mu.Lock()
	if !a.served[api] {
		a.waiting[api] = append(a.waiting[api], use)
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	return use()
}

// Serve records that the cluster serves the API (group: PLM's API group)
// and runs what waited for it, once. A use that fails is reported; the
// others still run.
func (a *APIs) Serve(api API, group string) error {
	a.mu.Lock()
	if a.served[api] {
		a.mu.Unlock()
		return nil
	}
	a.served[api] = true
	if api == APIPLM {
		a.plmGroup = group
	}
	uses := a.waiting[api]
	delete(a.waiting, api)
	a.mu.Unlock()
	var errs []error
	for _, use := range uses {
		if err := use(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(uses) > 0 {
		a.log.Info("Optional API now served: using it", "api", api, "group", group)
		if a.changed != nil {
			a.changed()
		}
	}
	a.notifyWatchers()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("setting up for %s: %w", api, err)
	}
	return nil
}

// SetFields records which optional fields of the Gateway API's CRDs the
// cluster serves now; when that changed, it tells the watchers (Watch).
// Unlike APIs, fields follow the cluster both ways: a CRD replaced by
// another channel's adds or removes them.
func (a *APIs) SetFields(fields map[status.Requirement]bool) {
	a.mu.Lock()
	changed := !maps.Equal(a.fields, fields)
	if changed {
		a.fields = maps.Clone(fields)
	}
	a.mu.Unlock()
	if changed {
		a.log.Info("Optional fields of the Gateway API's CRDs", "served", fmt.Sprint(fields))
		a.notifyWatchers()
	}
}

// Supports says whether the cluster serves what r names: an optional
// kind's CRD, or a field of a CRD (unknown until SetFields found it);
// the kinds Gatewall needs anyway (HTTPRoute, GRPCRoute, ...) always.
func (a *APIs) Supports(r status.Requirement) bool {
	if a == nil {
		return r.Field == "" && !slices.Contains(OptionalAPIs, API(r.Kind))
	}
	if r.Field != "" {
		if !slices.Contains(OptionalAPIs, API(r.Kind)) || a.Served(API(r.Kind)) {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.fields[r]
		}
		return false
	}
	if slices.Contains(OptionalAPIs, API(r.Kind)) {
		return a.Served(API(r.Kind))
	}
	return true
}

// Watch calls fn (from another goroutine than the caller's, without
// blocking it for long) whenever an optional API becomes served or the
// optional fields change: what depends on them (the GatewayClass's
// supported features) is derived again.
func (a *APIs) Watch(fn func()) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watchers = append(a.watchers, fn)
}

func (a *APIs) notifyWatchers() {
	a.mu.Lock()
	ws := slices.Clone(a.watchers)
	a.mu.Unlock()
	for _, fn := range ws {
		fn()
	}
}

// optionalWatcher adds watches of optional APIs' kinds to a built
// controller once their CRDs are installed: at once when they are, else
// when APIs.Serve says so (a running controller starts a watch added late).
type optionalWatcher struct {
	mgr  ctrl.Manager
	c    controller.Controller
	apis *APIs
}

func (w optionalWatcher) watch(api API, obj client.Object, h handler.EventHandler, preds ...predicate.Predicate) error {
	return w.apis.When(api, func() error {
		return w.c.Watch(source.Kind(w.mgr.GetCache(), obj, h, preds...))
	})
}

// watchPLM watches APPolicies and APLogConfs, of the group PLM serves,
// for changes of what they report (PLMStatusChanged).
func (w optionalWatcher) watchPLM(cfg Config, h handler.EventHandler) error {
	return w.apis.When(APIPLM, func() error {
		for _, obj := range plmObjects(cfg.plmGroup()) {
			if err := w.c.Watch(source.Kind(w.mgr.GetCache(), obj, h, PLMStatusChanged())); err != nil {
				return err
			}
		}
		return nil
	})
}
