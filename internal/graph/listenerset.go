package graph

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

// KindListenerSet is the kind of ListenerSets, in parentRefs and ReferenceGrants.
const KindListenerSet = "ListenerSet"

// ListenerSet is a ListenerSet whose parentRef names the Gateway. Its
// listeners join the Gateway's data plane when the Gateway allows the set
// (spec.allowedListeners) and at least one of them is valid.
//
// Precedence, per the Gateway API: the Gateway's own listeners first, then
// ListenerSets from the oldest to the newest (then by namespace/name). A
// listener that conflicts with an earlier one — same port with another
// protocol, or same port and hostname — is not accepted; the earlier one
// keeps working.
type ListenerSet struct {
	Source *gatewayv1.ListenerSet
	Key    types.NamespacedName
	// Accepted says whether the set is attached to the Gateway; only then
	// do its valid listeners serve traffic and routes attach to them.
	Accepted bool
	// Listeners in spec order; empty when the set is not allowed or its
	// Gateway is not accepted.
	Listeners []*Listener
	// Conditions: Accepted (Programmed comes from the data plane).
	Conditions []metav1.Condition
}

// buildListenerSets builds the ListenerSets that name the Gateway, in
// precedence order, after the Gateway's own listeners.
func buildListenerSets(in *Input, g *Gateway) []*ListenerSet {
	var sets []*ListenerSet
	for k, ls := range in.ListenerSets {
		if ListenerSetParent(ls) == g.Key {
			sets = append(sets, &ListenerSet{Source: ls, Key: k})
		}
	}
	sort.Slice(sets, func(i, j int) bool {
		a, b := sets[i].Source.CreationTimestamp, sets[j].Source.CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return sets[i].Key.String() < sets[j].Key.String()
	})
	allowed, allowErr := listenerSetFilter(in, g.Source)
	var taken []*Listener
	for _, l := range g.Listeners {
		if l.Attachable {
			taken = append(taken, l)
		}
	}
	for _, s := range sets {
		unreadable, isUnreadable := in.Unreadable(KindListenerSet, s.Key)
		switch err := validation.ObjectReference(s.Key.Namespace, s.Key.Name); {
		case isUnreadable:
			s.reject(gatewayv1.ListenerSetReasonInvalid, unreadable)
		case len(s.Source.Spec.Listeners) > validation.MaxListeners:
			s.reject(gatewayv1.ListenerSetReasonInvalid, validation.ListLength("spec.listeners", len(s.Source.Spec.Listeners), validation.MaxListeners).Error())
		case s.repeatedListenerName() != "":
			s.reject(gatewayv1.ListenerSetReasonInvalid, fmt.Sprintf(
				"spec.listeners: the name %s is used more than once; listener names must be unique within the ListenerSet", conditions.Quote(s.repeatedListenerName())))
		case err != nil:
			// Its name reaches nginx.conf (listener IDs); the API server refuses such names.
			s.reject(gatewayv1.ListenerSetReasonInvalid, "metadata: "+err.Error())
		case !g.Valid:
			s.reject(gatewayv1.ListenerSetReasonParentNotAccepted, fmt.Sprintf("Gateway %s is not accepted", g.Key))
		case allowErr != nil:
			s.reject(gatewayv1.ListenerSetReasonNotAllowed, fmt.Sprintf("Gateway %s: %s", g.Key, allowErr))
		case !allowed(s.Key.Namespace):
			s.reject(gatewayv1.ListenerSetReasonNotAllowed,
				fmt.Sprintf("Gateway %s does not allow ListenerSets from namespace %s (spec.allowedListeners)", g.Key, s.Key.Namespace))
		default:
			s.Listeners = s.buildListeners(in, g.Source)
			rejectReservedPorts(s.Listeners, g.setPortsTaken())
			added := markSetConflicts(taken, s.Listeners)
			if g.sockets != nil {
				g.sockets.admitListeners(added)
				g.sessions.admit(added)
			}
			if s.accept() {
				taken = append(taken, filterListeners(added, func(l *Listener) bool { return l.Attachable })...)
			}
		}
	}
	return sets
}

// ListenerSetParent is the Gateway a ListenerSet's parentRef names (empty
// when it names another kind).
func ListenerSetParent(ls *gatewayv1.ListenerSet) types.NamespacedName {
	ref := ls.Spec.ParentRef
	if ref.Group != nil && string(*ref.Group) != gatewayGroup || ref.Kind != nil && *ref.Kind != "Gateway" {
		return types.NamespacedName{}
	}
	ns := ls.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return key(ns, string(ref.Name))
}

// listenerSetFilter returns which namespaces a Gateway admits ListenerSets
// from: none unless spec.allowedListeners says otherwise.
func listenerSetFilter(in *Input, gw *gatewayv1.Gateway) (func(string) bool, error) {
	none := func(string) bool { return false }
	al := gw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil || al.Namespaces.From == nil || *al.Namespaces.From == gatewayv1.NamespacesFromNone {
		return none, nil
	}
	f, err := namespaceFilter(in, gw.Namespace, &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{
		From: al.Namespaces.From, Selector: al.Namespaces.Selector,
	}})
	if err != nil {
		return none, fmt.Errorf("allowedListeners: %w", err)
	}
	return f, nil
}

func (s *ListenerSet) repeatedListenerName() string {
	names := make([]string, 0, len(s.Source.Spec.Listeners))
	for _, l := range s.Source.Spec.Listeners {
		names = append(names, string(l.Name))
	}
	return repeated(names)
}

func (s *ListenerSet) reject(reason gatewayv1.ListenerSetConditionReason, msg string) {
	s.Accepted = false
	s.Conditions = []metav1.Condition{conditions.False(string(gatewayv1.ListenerSetConditionAccepted), string(reason), msg)}
}

// buildListeners builds the set's listeners; their references resolve from
// the set's namespace, with ReferenceGrants for ListenerSets.
func (s *ListenerSet) buildListeners(in *Input, gw *gatewayv1.Gateway) []*Listener {
	owner := listenerOwner{kind: KindListenerSet, namespace: s.Key.Namespace}
	ls := make([]*Listener, 0, len(s.Source.Spec.Listeners))
	for _, e := range s.Source.Spec.Listeners {
		l := buildListener(in, gw, owner, gatewayv1.Listener(e))
		l.Set = s
		l.ID = s.Key.Namespace + "/" + s.Key.Name + "/" + l.Name
		ls = append(ls, l)
	}
	return ls
}

// accept sets the set's Accepted condition from its listeners and says
// whether it is attached: at least one listener is valid.
func (s *ListenerSet) accept() bool {
	var invalid []string
	for _, l := range s.Listeners {
		if !l.Valid {
			invalid = append(invalid, l.Name)
		}
	}
	accepted := string(gatewayv1.ListenerSetConditionAccepted)
	switch {
	case len(invalid) == len(s.Listeners):
		s.reject(gatewayv1.ListenerSetReasonListenersNotValid, "no listener of the ListenerSet is valid")
	case len(invalid) > 0:
		s.Accepted = true
		s.Conditions = []metav1.Condition{conditions.True(accepted, string(gatewayv1.ListenerSetReasonListenersNotValid),
			"ListenerSet is accepted, but these listeners are not valid: "+strings.Join(invalid, ", "))}
	default:
		s.Accepted = true
		s.Conditions = []metav1.Condition{conditions.True(accepted, string(gatewayv1.ListenerSetReasonAccepted), "ListenerSet is accepted")}
	}
	return s.Accepted
}

// markSetConflicts marks the listeners of a ListenerSet that conflict with
// a listener taken before them (the Gateway's, an older set's, or an
// earlier one of the same set), and returns the ones it takes.
func markSetConflicts(taken, ls []*Listener) []*Listener {
	var added []*Listener
	for _, l := range ls {
		reason, msg := conflictWith(append(taken[:len(taken):len(taken)], added...), l)
		if reason == "" {
			if l.Attachable {
				added = append(added, l)
			}
			continue
		}
		l.Valid, l.Attachable = false, false
		l.Conditions = conditions.Set(l.Conditions, conditions.True(string(gatewayv1.ListenerEntryConditionConflicted), string(reason), msg))
		l.Conditions = conditions.Set(l.Conditions, conditions.False(string(gatewayv1.ListenerEntryConditionAccepted), string(reason), msg))
	}
	return added
}

// conflictWith returns why l cannot share its port with the taken
// listeners, or "". Messages name the owner of the earlier listener, never
// its other settings (a set must not learn its siblings' secrets).
func conflictWith(taken []*Listener, l *Listener) (gatewayv1.ListenerEntryConditionReason, string) {
	for _, t := range taken {
		if transportPort(t) == transportPort(l) && portFamily(t.Source.Protocol) != portFamily(l.Source.Protocol) {
			return gatewayv1.ListenerEntryReasonProtocolConflict,
				fmt.Sprintf("%s uses port %d with protocol %s", t.describeFor(l), l.Source.Port, t.Source.Protocol)
		}
	}
	for _, t := range taken {
		if transportPort(t) == transportPort(l) && t.Hostname == l.Hostname && passesPort(l.Source.Protocol) {
			return gatewayv1.ListenerEntryReasonProtocolConflict,
				fmt.Sprintf("%s uses port %d, which passes all its traffic to one route", t.describeFor(l), l.Source.Port)
		}
		if transportPort(t) == transportPort(l) && t.Hostname == l.Hostname {
			return gatewayv1.ListenerEntryReasonHostnameConflict,
				fmt.Sprintf("%s uses port %d with the same hostname %q", t.describeFor(l), l.Source.Port, l.Hostname)
		}
	}
	return "", ""
}

// describeFor names listener t in a message to the owner of listener l: a
// ListenerSet in another namespace stays anonymous.
func (t *Listener) describeFor(l *Listener) string {
	switch {
	case t.Set == nil:
		return fmt.Sprintf("the Gateway's listener %q", t.Name)
	case t.Set == l.Set:
		return fmt.Sprintf("listener %q of this ListenerSet", t.Name)
	case l.Set != nil && t.Set.Key.Namespace == l.Set.Key.Namespace:
		return fmt.Sprintf("listener %q of the older ListenerSet %s", t.Name, t.Set.Key.Name)
	}
	return "a listener of an older ListenerSet in another namespace"
}
