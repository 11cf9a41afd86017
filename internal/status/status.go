// Package status turns a Gateway's graph and what its data plane reported
// into the status objects Gatewall writes. Programmed always comes from the
// data plane's answer, never from a default. The package is pure: callers
// pass the previous status (to keep transition times) and the time.
package status

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/routekind"
	"github.com/gatewall/gatewall/internal/validation"
)

// DataPlaneState is what the data plane did with the current configuration.
type DataPlaneState int

// Data plane states.
const (
	// Pending: the configuration has not been applied yet (no pod, or in flight).
	Pending DataPlaneState = iota
	// Applied: every connected pod runs the current configuration (the
	// message, if any, says what else is not so, such as a pod that no
	// longer receives endpoints).
	Applied
	// Failed: a pod did not apply the configuration (its message says
	// whether NGINX kept its last good one).
	Failed
	// Unknown: no pod has reported since this manager started (a restart):
	// the previous Programmed condition stands if it is about the current
	// generation, so statuses do not flap while agents reconnect.
	Unknown
)

// DataPlane is the data plane's answer for one Gateway.
type DataPlane struct {
	State   DataPlaneState
	Message string
}

// Offline is the data plane state of a configuration rendered without a cluster.
var Offline = DataPlane{State: Pending, Message: "rendered offline: no data plane has applied this configuration"}

// keepProgrammed returns the old Programmed condition when the data plane's
// state is Unknown and that condition is about the current generation.
func keepProgrammed(dp DataPlane, old []metav1.Condition, generation int64) (metav1.Condition, bool) {
	if dp.State != Unknown {
		return metav1.Condition{}, false
	}
	for _, c := range old {
		if c.Type == string(gatewayv1.GatewayConditionProgrammed) && c.ObservedGeneration == generation {
			c.ObservedGeneration, c.LastTransitionTime = 0, metav1.Time{}
			return c, true
		}
	}
	return metav1.Condition{}, false
}

func programmed(valid bool, dp DataPlane, invalidMsg string) metav1.Condition {
	t := string(gatewayv1.GatewayConditionProgrammed)
	switch {
	case !valid:
		return conditions.False(t, string(gatewayv1.GatewayReasonInvalid), invalidMsg)
	case dp.State == Applied && dp.Message != "":
		return conditions.True(t, string(gatewayv1.GatewayReasonProgrammed), "the data plane applied the configuration; "+dp.Message)
	case dp.State == Applied:
		return conditions.True(t, string(gatewayv1.GatewayReasonProgrammed), "the data plane applied the configuration")
	case dp.State == Failed:
		// dp.Message says, per pod, why and what NGINX runs now: its last
		// good configuration, or, when the rollback failed too, not known.
		return conditions.False(t, string(gatewayv1.GatewayReasonInvalid), "the data plane did not apply the configuration: "+dp.Message)
	}
	msg := dp.Message
	if msg == "" {
		msg = "waiting for the data plane to apply the configuration"
	}
	return conditions.False(t, string(gatewayv1.GatewayReasonPending), msg)
}

// Gateway returns the Gateway's status; problem, when set, is the
// Programmed=False condition of a valid Gateway whose data plane has a
// problem the data plane's answer does not show (requested addresses not
// assigned, objects that cannot be provisioned); extra are conditions
// policies add (<Kind>Affected).
func Gateway(g *graph.Gateway, dp DataPlane, addresses []gatewayv1.GatewayStatusAddress, problem *metav1.Condition, extra []metav1.Condition, old gatewayv1.GatewayStatus, now metav1.Time) gatewayv1.GatewayStatus {
	gen := g.Source.Generation
	want := append(append([]metav1.Condition(nil), g.Conditions...), extra...)
	prog := programmed(g.Valid, dp, "the Gateway is not accepted")
	if c, ok := keepProgrammed(dp, old.Conditions, gen); ok && g.Valid {
		prog = c
	}
	if problem != nil && g.Valid {
		prog = *problem
	}
	want = append(want, withNotProgrammed(prog, g.NotProgrammed))
	st := gatewayv1.GatewayStatus{
		Addresses:  addresses,
		Conditions: conditions.Merge(old.Conditions, want, gen, now),
	}
	oldListeners := map[gatewayv1.SectionName][]metav1.Condition{}
	for _, l := range old.Listeners {
		oldListeners[l.Name] = l.Conditions
	}
	for _, l := range uniqueListeners(g.Listeners) {
		have := oldListeners[l.Source.Name]
		lw := append(append([]metav1.Condition(nil), l.Conditions...), listenerProgrammed(l, g.Valid, dp, have, gen))
		st.Listeners = append(st.Listeners, gatewayv1.ListenerStatus{
			Name:           l.Source.Name,
			SupportedKinds: supportedKinds(l),
			AttachedRoutes: l.AttachedRoutes,
			Conditions:     conditions.Merge(have, lw, gen, now),
		})
	}
	if n := g.AttachedListenerSets(); n > 0 || g.Source.Spec.AllowedListeners != nil {
		st.AttachedListenerSets = &n
	}
	return st
}

// withNotProgrammed adds to a valid Gateway's Programmed condition what of
// its effective NginxProxy the data plane does not carry out, whether it
// applied the rest or not yet (a condition kept across a restart has it).
func withNotProgrammed(c metav1.Condition, notes []string) metav1.Condition {
	if len(notes) == 0 || c.Reason == string(gatewayv1.GatewayReasonInvalid) || strings.Contains(c.Message, NotProgrammedPrefix) {
		return c
	}
	msg := c.Message + NotProgrammedPrefix + strings.Join(notes, "; ")
	if c.Status == metav1.ConditionTrue {
		return conditions.True(c.Type, c.Reason, msg) // truncated as any message
	}
	return conditions.False(c.Type, c.Reason, msg)
}

// NotProgrammedPrefix starts what withNotProgrammed adds to a Gateway's
// Programmed message.
const NotProgrammedPrefix = "; the effective NginxProxy's settings are programmed but: "

// listenerProgrammed is a listener's Programmed condition; parentValid says
// whether the Gateway (or ListenerSet) declaring it is.
func listenerProgrammed(l *graph.Listener, parentValid bool, dp DataPlane, old []metav1.Condition, gen int64) metav1.Condition {
	if c, ok := keepProgrammed(dp, old, gen); ok && l.Valid && parentValid {
		return c
	}
	return programmed(l.Valid && parentValid, dp, "the listener is not valid")
}

// uniqueListeners leaves out listeners whose name an earlier one has: the
// API server refuses a status listing a name twice (such a Gateway or
// ListenerSet is not accepted, and its conditions say why).
func uniqueListeners(ls []*graph.Listener) []*graph.Listener {
	seen := map[gatewayv1.SectionName]bool{}
	var out []*graph.Listener
	for _, l := range ls {
		if !seen[l.Source.Name] {
			seen[l.Source.Name] = true
			out = append(out, l)
		}
	}
	return out
}

func supportedKinds(l *graph.Listener) []gatewayv1.RouteGroupKind {
	if l.SupportedKinds == nil {
		return []gatewayv1.RouteGroupKind{}
	}
	return l.SupportedKinds
}

// ListenerSet returns a ListenerSet's status. A set that is not attached is
// not programmed, for the reason it is not accepted; a listener that is not
// accepted is not programmed for its own reason (a conflict, say).
func ListenerSet(s *graph.ListenerSet, dp DataPlane, old gatewayv1.ListenerSetStatus, now metav1.Time) gatewayv1.ListenerSetStatus {
	gen := s.Source.Generation
	prog := notProgrammedAsRejected(s.Conditions)
	if s.Accepted {
		prog = programmed(true, dp, "")
		if c, ok := keepProgrammed(dp, old.Conditions, gen); ok {
			prog = c
		}
	}
	want := append(append([]metav1.Condition(nil), s.Conditions...), prog)
	st := gatewayv1.ListenerSetStatus{Conditions: conditions.Merge(old.Conditions, want, gen, now)}
	oldListeners := map[gatewayv1.SectionName][]metav1.Condition{}
	for _, l := range old.Listeners {
		oldListeners[l.Name] = l.Conditions
	}
	for _, l := range uniqueListeners(s.Listeners) {
		have := oldListeners[l.Source.Name]
		lprog := notProgrammedAsRejected(l.Conditions)
		if l.Attachable {
			lprog = listenerProgrammed(l, s.Accepted, dp, have, gen)
		}
		lw := append(append([]metav1.Condition(nil), l.Conditions...), lprog)
		st.Listeners = append(st.Listeners, gatewayv1.ListenerEntryStatus{
			Name:           l.Source.Name,
			SupportedKinds: supportedKinds(l),
			AttachedRoutes: l.AttachedRoutes,
			Conditions:     conditions.Merge(have, lw, gen, now),
		})
	}
	return st
}

// notProgrammedAsRejected is Programmed=False with the reason and message
// of an Accepted=False condition in list.
func notProgrammedAsRejected(list []metav1.Condition) metav1.Condition {
	t := string(gatewayv1.GatewayConditionProgrammed)
	if c := conditions.Find(list, string(gatewayv1.GatewayConditionAccepted)); c != nil && c.Status == metav1.ConditionFalse {
		return conditions.False(t, c.Reason, c.Message)
	}
	return conditions.False(t, string(gatewayv1.GatewayReasonInvalid), "not accepted")
}

// GatewayClass returns the class's status.
func GatewayClass(c *graph.GatewayClass, features []gatewayv1.SupportedFeature, old gatewayv1.GatewayClassStatus, now metav1.Time) gatewayv1.GatewayClassStatus {
	return gatewayv1.GatewayClassStatus{
		Conditions:        conditions.Merge(old.Conditions, c.Conditions, c.Source.Generation, now),
		SupportedFeatures: features,
	}
}

// RouteParents returns the parent statuses a Gateway's graph sets on a route,
// one per parentRef naming the Gateway; extra are conditions policies add
// (<Kind>Affected) on the parents the route attached through.
func RouteParents(r *graph.Route, controllerName string, extra []metav1.Condition, old []gatewayv1.RouteParentStatus, now metav1.Time) []gatewayv1.RouteParentStatus {
	var out []gatewayv1.RouteParentStatus
	for _, p := range r.Parents {
		var have []metav1.Condition
		for _, o := range old {
			if string(o.ControllerName) == controllerName && SameParentRef(o.ParentRef, p.Ref, r.Key.Namespace) {
				have = o.Conditions
			}
		}
		want := p.Conditions
		if p.Attached() {
			want = append(append([]metav1.Condition(nil), want...), extra...)
		}
		out = append(out, gatewayv1.RouteParentStatus{
			ParentRef:      p.Ref,
			ControllerName: gatewayv1.GatewayController(controllerName),
			Conditions:     conditions.Merge(have, want, r.Source.GetGeneration(), now),
		})
	}
	return out
}

// OrderRouteParents puts a route's parent statuses in one order, whichever
// Gateway wrote last: other controllers' entries first, as they are, then
// this controller's in the order of the route's parentRefs (entries for a
// parentRef the route no longer has last). The manager and the render
// command both use it, so a route's status does not change with the order
// of reconciles. It returns the first 32 (the API server stores no more:
// a route with more parentRefs is refused, and says so in those).
func OrderRouteParents(route runtime.Object, ns string, parents []gatewayv1.RouteParentStatus, controllerName string) []gatewayv1.RouteParentStatus {
	refs := routeParentRefs(route)
	rank := func(p gatewayv1.RouteParentStatus) int {
		if string(p.ControllerName) != controllerName {
			return -1
		}
		for i, r := range refs {
			if SameParentRef(p.ParentRef, r, ns) {
				return i
			}
		}
		return len(refs)
	}
	sort.SliceStable(parents, func(i, j int) bool { return rank(parents[i]) < rank(parents[j]) })
	return parents[:min(len(parents), validation.MaxParentRefs)]
}

// routeParentRefs are a route's parentRefs (of any kind of routekind.Kinds).
func routeParentRefs(route runtime.Object) []gatewayv1.ParentReference {
	if o, ok := route.(client.Object); ok {
		return routekind.ParentRefs(o)
	}
	return nil
}

// SameParentRef says whether two parentRefs of a route in namespace ns name
// the same parent, section and port.
func SameParentRef(a, b gatewayv1.ParentReference, ns string) bool {
	str := func(p *gatewayv1.Group, def string) string {
		if p == nil {
			return def
		}
		return string(*p)
	}
	kind := func(p *gatewayv1.Kind) string {
		if p == nil {
			return "Gateway"
		}
		return string(*p)
	}
	nsOf := func(p *gatewayv1.Namespace) string {
		if p == nil {
			return ns
		}
		return string(*p)
	}
	section := func(p *gatewayv1.SectionName) string {
		if p == nil {
			return ""
		}
		return string(*p)
	}
	port := func(p *gatewayv1.PortNumber) int32 {
		if p == nil {
			return 0
		}
		return *p
	}
	return str(a.Group, gatewayv1.GroupName) == str(b.Group, gatewayv1.GroupName) && kind(a.Kind) == kind(b.Kind) &&
		nsOf(a.Namespace) == nsOf(b.Namespace) && a.Name == b.Name &&
		section(a.SectionName) == section(b.SectionName) && port(a.Port) == port(b.Port)
}
