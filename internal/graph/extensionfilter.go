package graph

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// Route rules name filters of Gatewall's own kinds in ExtensionRef filters
// (group gateway.nginx.org, a kind, a name in the route's namespace). Each
// such kind registers once, in ExtensionFilterKinds: its objects and
// lists (which the manager lists and watches), the Secrets an object reads
// (which snapshots read and whose changes wake the Gateways), and how an
// object of the input resolves into what a rule does with it. A kind
// plugs in here, in the renderer (what a resolved filter writes) and in
// the registry of the manager's reconcilers when its objects have a status
// of their own.
//
// The Gateway API requires a filter that does not resolve never to be
// skipped: the requests it would have processed get an error. So a rule
// whose ExtensionRef names nothing usable stays configured and answers 500
// (Filters.Error), and the route's ResolvedRefs says why.

// ExtensionFilterKind is one kind of filter an ExtensionRef may name.
type ExtensionFilterKind struct {
	// Group and Kind are what an ExtensionRef names.
	Group, Kind string
	// New returns an empty object of the kind; NewList an empty list.
	New     func() client.Object
	NewList func() client.ObjectList
	// Items are a list's objects.
	Items func(client.ObjectList) []client.Object
	// Secrets are the Secrets an object of the kind reads, in its namespace.
	Secrets func(client.Object) []types.NamespacedName
	// Resolve resolves an object of the input. It is pure; the result's
	// Error says why the filter cannot do its work.
	Resolve func(in *Input, obj client.Object) *ExtensionFilter
	// Controllers are an object's status: each controller's conditions
	// (NGINX Gateway Fabric's shape for filters), to read and to set.
	Controllers func(client.Object) *[]v1alpha1.ControllerStatus

	typ reflect.Type
}

// ExtensionFilterKinds are the kinds ExtensionRef filters may name.
var ExtensionFilterKinds = []*ExtensionFilterKind{authenticationFilterKind, snippetsFilterKind}

// extensionGroup is the API group of every kind ExtensionRefs may name.
const extensionGroup = "gateway.nginx.org"

// ExtensionFilterKindOf returns the registered kind of an object, or nil.
func ExtensionFilterKindOf(o client.Object) *ExtensionFilterKind {
	t := reflect.TypeOf(o)
	for _, k := range ExtensionFilterKinds {
		if k.typ == t {
			return k
		}
	}
	return nil
}

// ExtensionFilterKindNamed returns the registered kind of that name (the
// kinds are of one group), or nil.
func ExtensionFilterKindNamed(kind string) *ExtensionFilterKind {
	return ExtensionFilterKindFor(extensionGroup, kind)
}

// ExtensionFilterKindFor returns the registered kind of a group and kind
// (an ExtensionRef's), or nil.
func ExtensionFilterKindFor(group, kind string) *ExtensionFilterKind {
	for _, k := range ExtensionFilterKinds {
		if k.Group == group && k.Kind == kind {
			return k
		}
	}
	return nil
}

// ExtensionFilter is a filter object resolved: what it makes a rule do.
type ExtensionFilter struct {
	// Ref names the filter object.
	Ref ObjectRef
	// Error says why the filter cannot do its work ("" when it can): the
	// object is invalid, or what it asks cannot be enforced. Rules that
	// use it answer 500.
	Error string
	// Invalid says the object is not Accepted: it is invalid, or, with a
	// Reason, the installation does not use it (snippets disabled).
	// Otherwise the object is valid but not programmed, for Reason.
	Invalid bool
	Reason  string
	// Detail is what the filter's Accepted message adds when it is valid.
	Detail string
	// Authentication is an AuthenticationFilter's authentication.
	Authentication *Authentication
	// Snippets are a SnippetsFilter's snippets.
	Snippets *FilterSnippets
}

// ResolveExtensionFilter resolves the filter object of a kind in the
// input, for its own status; nil when the input does not hold it.
func ResolveExtensionFilter(in *Input, kind string, key types.NamespacedName) *ExtensionFilter {
	o := in.Filters[kind][key]
	if o == nil {
		return nil
	}
	k := ExtensionFilterKindOf(o)
	if msg, ok := in.Unreadable(kind, key); ok {
		return &ExtensionFilter{Ref: ObjectRef{Kind: kind, Key: key}, Error: msg, Invalid: true}
	}
	return k.Resolve(in, o)
}

// addFilter adds an object of a registered filter kind; false for others.
func (in *Input) addFilter(obj any) bool {
	o, ok := obj.(client.Object)
	if !ok {
		return false
	}
	k := ExtensionFilterKindOf(o)
	if k == nil {
		return false
	}
	if in.Filters[k.Kind] == nil {
		in.Filters[k.Kind] = map[types.NamespacedName]client.Object{}
	}
	in.Filters[k.Kind][key(o.GetNamespace(), o.GetName())] = o
	return true
}

// extensionRef is an ExtensionRef filter of a rule and its index in the
// rule's filters.
type extensionRef struct {
	index int
	ref   *gatewayv1.LocalObjectReference
}

// extensionRefs resolves a rule's ExtensionRef filters (refs, with their
// indexes in the rule's filters) into the rule's filters. A ref that does
// not resolve, or resolves to a filter that cannot do its work, sets
// f.Error: the rule answers 500 rather than serving without the filter.
// The returned error is a mistake in the rule itself (two
// AuthenticationFilters), which makes the rule invalid.
func extensionRefs(in *Input, routeNamespace string, rule int, refs []extensionRef, f *Filters, resolved *resolvedRefs) error {
	var errs []string
	auth := -1
	deny := func(reason gatewayv1.RouteConditionReason, msg string) {
		f.fail(msg)
		resolved.addFilter(reason, fmt.Sprintf("spec.rules[%d].%s (the rule answers 500)", rule, msg))
	}
	for _, r := range refs {
		i, ref := r.index, r.ref
		where := fmt.Sprintf("filters[%d]", i)
		k := ExtensionFilterKindFor(string(ref.Group), string(ref.Kind))
		if k == nil {
			deny(gatewayv1.RouteReasonInvalidKind, fmt.Sprintf("%s: extensionRef %s is not a kind of filter Gatewall serves", where,
				describeRef(string(ref.Group), string(ref.Kind), string(ref.Name))))
			continue
		}
		if k == authenticationFilterKind {
			if auth >= 0 {
				errs = append(errs, fmt.Sprintf("%s: a rule takes one AuthenticationFilter, and filters[%d] names one already", where, auth))
				continue
			}
			auth = i
		}
		name := ObjectRef{Kind: k.Kind, Key: key(routeNamespace, string(ref.Name))}
		if err := validation.ObjectReference(routeNamespace, string(ref.Name)); err != nil {
			deny(RouteReasonInvalidFilter, fmt.Sprintf("%s: extensionRef %s: %v", where, describeRef(string(ref.Group), string(ref.Kind), string(ref.Name)), err))
			continue
		}
		o := in.Filters[k.Kind][name.Key]
		msg, unreadable := in.Unreadable(k.Kind, name.Key)
		switch {
		case unreadable:
			deny(RouteReasonInvalidFilter, fmt.Sprintf("%s: %s", where, msg))
			continue
		case o == nil:
			deny(RouteReasonInvalidFilter, fmt.Sprintf("%s: %s not found", where, name))
			continue
		}
		ef := k.Resolve(in, o)
		switch {
		case ef.Error != "" && ef.Invalid && ef.Reason != "":
			deny(RouteReasonInvalidFilter, fmt.Sprintf("%s: %s is not accepted: %s", where, name, ef.Error))
		case ef.Error != "" && ef.Invalid:
			deny(RouteReasonInvalidFilter, fmt.Sprintf("%s: %s is invalid: %s", where, name, ef.Error))
		case ef.Error != "":
			deny(RouteReasonInvalidFilter, fmt.Sprintf("%s: %s is not programmed: %s", where, name, ef.Error))
		case ef.Authentication != nil:
			f.Authentication = ef.Authentication
		case ef.Snippets != nil:
			f.Snippets = append(f.Snippets, ef.Snippets)
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// RouteReasonInvalidFilter is the reason of a route's ResolvedRefs=False
// when a rule's ExtensionRef filter does not exist, is invalid, or cannot
// be enforced (NGINX Gateway Fabric's reason for the same).
const RouteReasonInvalidFilter gatewayv1.RouteConditionReason = "InvalidFilter"

// fail records why the rule's requests are answered 500.
func (f *Filters) fail(msg string) {
	if f.Error != "" {
		f.Error += "; "
	}
	f.Error += msg
}

// addExtensionRef records an ExtensionRef filter of the rule, to resolve
// with the route's references.
func (f *Filters) addExtensionRef(index int, ref *gatewayv1.LocalObjectReference) error {
	if ref == nil {
		return errors.New("the filter's configuration is missing")
	}
	f.extensionRefs = append(f.extensionRefs, extensionRef{index: index, ref: ref})
	return nil
}

// namesAuthentication says whether an ExtensionRef of the rule names an
// AuthenticationFilter.
func (f *Filters) namesAuthentication() bool {
	for _, r := range f.extensionRefs {
		if string(r.ref.Group) == authenticationFilterKind.Group && string(r.ref.Kind) == authenticationFilterKind.Kind {
			return true
		}
	}
	return false
}

// resolveFilters resolves the references of rule's filters that the
// route's ResolvedRefs reports: its ExtensionRefs and its ExternalAuth's
// service. What does not resolve makes the rule answer 500 (Error), noted
// in its Notes; the error is a mistake that makes the rule invalid.
func resolveFilters(in *Input, routeNamespace string, rule *Rule, resolved *resolvedRefs) error {
	f := &rule.Filters
	err := extensionRefs(in, routeNamespace, rule.Index, f.extensionRefs, f, resolved)
	if h := claimHeaderConflict(f); h != "" && err == nil {
		err = fmt.Errorf("header %q is set both from a claim of the AuthenticationFilter and from the ExternalAuth service's answer; keep one", h)
	}
	if ea := f.ExternalAuth; ea != nil {
		resolved.add(ea.Backend, ea.reason)
		if !ea.Backend.Valid {
			f.fail("the ExternalAuth filter's authorization service: " + ea.Backend.Err)
		}
	}
	rule.Notes = append(rule.Notes, f.notes...)
	if f.Error != "" {
		rule.Notes = append(rule.Notes, "answers 500: a filter it needs cannot process its requests (ResolvedRefs says why)")
	}
	return err
}
