// Package routekind is the registry of the route kinds Gatewall serves:
// what the manager, the status writers and the offline renderer need to
// know of a kind (its objects and lists, its parentRefs and parent
// statuses, the Services it names, whether its CRD may be missing) is
// registered once, in Kinds; for an optional CRD, what its absence leaves
// out too (the manager derives the kind's optional API, its discovery and
// its log line from it). The graph holds routes by kind (graph.Input.Routes)
// and builds each kind with its entry in graph's routeKinds; everything
// else iterates Kinds.
//
// Adding a route kind: a registration here, its builder and entry in
// package graph, its rendering in nginx/config. docs/architecture.md has
// the checklist.
package routekind

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Kind is one route kind.
type Kind struct {
	// Name is the kind's name: "HTTPRoute".
	Name string
	// Optional says the kind's CRD may be missing, or installed after the
	// manager started (the manager then watches it once it is served).
	Optional bool
	// Missing says what the absence of an optional kind's CRD leaves out,
	// and Since the Gateway API release whose standard channel serves the
	// kind in v1 (the manager logs both when the CRD is missing).
	Missing, Since string
	// New returns an empty object of the kind; NewList an empty list.
	New     func() client.Object
	NewList func() client.ObjectList
	// Items are a list's objects (pointers into the list).
	Items func(client.ObjectList) []client.Object
	// Common returns a route's parentRefs and its status's parents (to
	// read or replace: they are the object's own).
	Common func(client.Object) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus)
	// Backends are the objects a route's rules send traffic to (backendRefs,
	// request mirrors and authorization services), in spec order.
	Backends func(client.Object) []gatewayv1.BackendObjectReference
	// ExtensionRefs are the filters a route's rules name in ExtensionRef
	// filters, in spec order; nil for kinds without filters.
	ExtensionRefs func(client.Object) []gatewayv1.LocalObjectReference

	// typ is the Go type of the kind's objects (a pointer to a struct).
	typ reflect.Type
}

// Kinds are the route kinds Gatewall serves, sorted by name.
var Kinds = []*Kind{
	withExtensionRefs(register("GRPCRoute", false, func(l *gatewayv1.GRPCRouteList) []gatewayv1.GRPCRoute { return l.Items },
		func(r *gatewayv1.GRPCRoute) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus) {
			return &r.Spec.CommonRouteSpec, &r.Status.RouteStatus
		},
		func(r *gatewayv1.GRPCRoute) []gatewayv1.BackendObjectReference {
			var out []gatewayv1.BackendObjectReference
			for _, rule := range r.Spec.Rules {
				for _, b := range rule.BackendRefs {
					out = append(out, b.BackendObjectReference)
				}
				out = append(out, mirrors(rule.Filters, func(f gatewayv1.GRPCRouteFilter) *gatewayv1.HTTPRequestMirrorFilter { return f.RequestMirror })...)
			}
			return out
		}), func(r *gatewayv1.GRPCRoute) []gatewayv1.LocalObjectReference {
		var out []gatewayv1.LocalObjectReference
		for _, rule := range r.Spec.Rules {
			out = append(out, extensionRefs(rule.Filters, func(f gatewayv1.GRPCRouteFilter) *gatewayv1.LocalObjectReference { return f.ExtensionRef })...)
		}
		return out
	}),
	withExtensionRefs(register("HTTPRoute", false, func(l *gatewayv1.HTTPRouteList) []gatewayv1.HTTPRoute { return l.Items },
		func(r *gatewayv1.HTTPRoute) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus) {
			return &r.Spec.CommonRouteSpec, &r.Status.RouteStatus
		},
		func(r *gatewayv1.HTTPRoute) []gatewayv1.BackendObjectReference {
			var out []gatewayv1.BackendObjectReference
			for _, rule := range r.Spec.Rules {
				for _, b := range rule.BackendRefs {
					out = append(out, b.BackendObjectReference)
				}
				out = append(out, mirrors(rule.Filters, func(f gatewayv1.HTTPRouteFilter) *gatewayv1.HTTPRequestMirrorFilter { return f.RequestMirror })...)
				for _, f := range rule.Filters {
					if f.ExternalAuth != nil {
						out = append(out, f.ExternalAuth.BackendRef)
					}
				}
			}
			return out
		}), func(r *gatewayv1.HTTPRoute) []gatewayv1.LocalObjectReference {
		var out []gatewayv1.LocalObjectReference
		for _, rule := range r.Spec.Rules {
			out = append(out, extensionRefs(rule.Filters, func(f gatewayv1.HTTPRouteFilter) *gatewayv1.LocalObjectReference { return f.ExtensionRef })...)
		}
		return out
	}),
	optional("TCP listeners serve no routes", "v1.6", register("TCPRoute", true, func(l *gatewayv1.TCPRouteList) []gatewayv1.TCPRoute { return l.Items },
		func(r *gatewayv1.TCPRoute) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus) {
			return &r.Spec.CommonRouteSpec, &r.Status.RouteStatus
		},
		func(r *gatewayv1.TCPRoute) []gatewayv1.BackendObjectReference {
			var out []gatewayv1.BackendObjectReference
			for _, rule := range r.Spec.Rules {
				out = append(out, backendRefs(rule.BackendRefs)...)
			}
			return out
		})),
	optional("TLS listeners serve no routes", "v1.5", register("TLSRoute", true, func(l *gatewayv1.TLSRouteList) []gatewayv1.TLSRoute { return l.Items },
		func(r *gatewayv1.TLSRoute) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus) {
			return &r.Spec.CommonRouteSpec, &r.Status.RouteStatus
		},
		func(r *gatewayv1.TLSRoute) []gatewayv1.BackendObjectReference {
			var out []gatewayv1.BackendObjectReference
			for _, rule := range r.Spec.Rules {
				out = append(out, backendRefs(rule.BackendRefs)...)
			}
			return out
		})),
	optional("UDP listeners serve no routes", "v1.6", register("UDPRoute", true, func(l *gatewayv1.UDPRouteList) []gatewayv1.UDPRoute { return l.Items },
		func(r *gatewayv1.UDPRoute) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus) {
			return &r.Spec.CommonRouteSpec, &r.Status.RouteStatus
		},
		func(r *gatewayv1.UDPRoute) []gatewayv1.BackendObjectReference {
			var out []gatewayv1.BackendObjectReference
			for _, rule := range r.Spec.Rules {
				out = append(out, backendRefs(rule.BackendRefs)...)
			}
			return out
		})),
}

// optional records what the absence of an optional kind's CRD leaves out,
// and the Gateway API release that serves it in v1.
func optional(missing, since string, k *Kind) *Kind {
	k.Missing, k.Since = missing, since
	return k
}

// register makes a Kind from typed functions of a route type R (a pointer
// to T) and its list type L.
func register[T any, R interface {
	*T
	client.Object
}, L any, LP interface {
	*L
	client.ObjectList
}](name string, optional bool, items func(LP) []T, common func(R) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus), backends func(R) []gatewayv1.BackendObjectReference) *Kind {
	return &Kind{
		Name:     name,
		Optional: optional,
		typ:      reflect.TypeOf(R(nil)),
		New:      func() client.Object { return R(new(T)) },
		NewList:  func() client.ObjectList { return LP(new(L)) },
		Items: func(l client.ObjectList) []client.Object {
			objs := items(l.(LP))
			out := make([]client.Object, len(objs))
			for i := range objs {
				out[i] = R(&objs[i])
			}
			return out
		},
		Common:   func(o client.Object) (*gatewayv1.CommonRouteSpec, *gatewayv1.RouteStatus) { return common(o.(R)) },
		Backends: func(o client.Object) []gatewayv1.BackendObjectReference { return backends(o.(R)) },
	}
}

func backendRefs(refs []gatewayv1.BackendRef) []gatewayv1.BackendObjectReference {
	out := make([]gatewayv1.BackendObjectReference, 0, len(refs))
	for _, b := range refs {
		out = append(out, b.BackendObjectReference)
	}
	return out
}

func mirrors[F any](filters []F, mirror func(F) *gatewayv1.HTTPRequestMirrorFilter) []gatewayv1.BackendObjectReference {
	var out []gatewayv1.BackendObjectReference
	for _, f := range filters {
		if m := mirror(f); m != nil {
			out = append(out, m.BackendRef)
		}
	}
	return out
}

// withExtensionRefs records how a kind's routes (of type R) name filters.
func withExtensionRefs[R client.Object](k *Kind, refs func(R) []gatewayv1.LocalObjectReference) *Kind {
	k.ExtensionRefs = func(o client.Object) []gatewayv1.LocalObjectReference { return refs(o.(R)) }
	return k
}

func extensionRefs[F any](filters []F, ref func(F) *gatewayv1.LocalObjectReference) []gatewayv1.LocalObjectReference {
	var out []gatewayv1.LocalObjectReference
	for _, f := range filters {
		if r := ref(f); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// Named returns the kind of that name, or nil.
func Named(name string) *Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Of returns the kind of a route object, or nil for an object of another kind.
func Of(o client.Object) *Kind {
	t := reflect.TypeOf(o)
	for _, k := range Kinds {
		if k.typ == t {
			return k
		}
	}
	return nil
}

// ParentRefs are a route's parentRefs; nil for an object of another kind.
func ParentRefs(o client.Object) []gatewayv1.ParentReference {
	if k := Of(o); k != nil {
		spec, _ := k.Common(o)
		return spec.ParentRefs
	}
	return nil
}

// Parents are a route's parent statuses; nil for an object of another kind.
func Parents(o client.Object) []gatewayv1.RouteParentStatus {
	if k := Of(o); k != nil {
		_, st := k.Common(o)
		return st.Parents
	}
	return nil
}

// SetParents replaces a route's parent statuses; it says whether o is a route.
func SetParents(o client.Object, parents []gatewayv1.RouteParentStatus) bool {
	k := Of(o)
	if k == nil {
		return false
	}
	_, st := k.Common(o)
	st.Parents = parents
	return true
}

// Required are the kinds whose CRD Gatewall requires; Optional the others.
func Required() []*Kind { return kindsWhere(false) }
func Optional() []*Kind { return kindsWhere(true) }

func kindsWhere(optional bool) []*Kind {
	var out []*Kind
	for _, k := range Kinds {
		if k.Optional == optional {
			out = append(out, k)
		}
	}
	return out
}
