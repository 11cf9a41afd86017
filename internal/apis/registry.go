package apis

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/go-logr/logr"

	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/status"
)

// API is an optional API Gatewall uses when the cluster serves it: its CRD
// may be installed before the manager starts or at any time after.
type API string

// The optional APIs.
const (
	// PLM is PLM's APPolicy and APLogConf (PLMGroup says in which group).
	PLM API = "PLM"
	// ListenerSet is the Gateway API's ListenerSet.
	ListenerSet API = "ListenerSet"
	// BackendTLSPolicy is the Gateway API's BackendTLSPolicy.
	BackendTLSPolicy API = "BackendTLSPolicy"
)

// Optional are the optional APIs, in the order they are enabled: the
// optional route kinds of routekind.Kinds have an API each, named after
// the kind (RouteAPI).
var Optional = optional()

func optional() []API {
	apis := []API{PLM}
	for _, k := range routekind.Optional() {
		apis = append(apis, RouteAPI(k))
	}
	return append(apis, ListenerSet, BackendTLSPolicy)
}

// RouteAPI is the optional API of a route kind; "" when its CRD is
// required.
func RouteAPI(k *routekind.Kind) API {
	if k.Optional {
		return API(k.Name)
	}
	return ""
}

// RouteKindOf is the route kind of an optional API; nil for the others.
func RouteKindOf(api API) *routekind.Kind {
	if k := routekind.Named(string(api)); k != nil && k.Optional {
		return k
	}
	return nil
}

// Registry says which optional APIs the cluster serves, and sets up what uses
// one when its CRD appears after the manager started: indexes, watches and
// controllers register with When, and Serve runs them. An API stays served
// once it is (a CRD removed later is not followed). Safe for concurrent
// use; the nil APIs serves none.
type Registry struct {
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

// New returns APIs serving none yet; changed (may be nil) is called
// after an API becomes served once the manager runs.
func New(log logr.Logger, changed func()) *Registry {
	return &Registry{served: map[API]bool{}, waiting: map[API][]func() error{}, log: log, changed: changed}
}

// Served says whether the cluster serves the API.
func (a *Registry) Served(api API) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served[api]
}

// PLMGroup is the API group of the PLM objects in use, "" until one is served.
func (a *Registry) PLMGroup() string {
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
func (a *Registry) When(api API, use func() error) error {
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
func (a *Registry) Serve(api API, group string) error {
	a.mu.Lock()
	if a.served[api] {
		a.mu.Unlock()
		return nil
	}
	a.served[api] = true
	if api == PLM {
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
func (a *Registry) SetFields(fields map[status.Requirement]bool) {
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
func (a *Registry) Supports(r status.Requirement) bool {
	if a == nil {
		return r.Field == "" && !slices.Contains(Optional, API(r.Kind))
	}
	if r.Field != "" {
		if !slices.Contains(Optional, API(r.Kind)) || a.Served(API(r.Kind)) {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.fields[r]
		}
		return false
	}
	if slices.Contains(Optional, API(r.Kind)) {
		return a.Served(API(r.Kind))
	}
	return true
}

// Watch calls fn (from another goroutine than the caller's, without
// blocking it for long) whenever an optional API becomes served or the
// optional fields change: what depends on them (the GatewayClass's
// supported features) is derived again.
func (a *Registry) Watch(fn func()) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watchers = append(a.watchers, fn)
}

func (a *Registry) notifyWatchers() {
	a.mu.Lock()
	ws := slices.Clone(a.watchers)
	a.mu.Unlock()
	for _, fn := range ws {
		fn()
	}
}
