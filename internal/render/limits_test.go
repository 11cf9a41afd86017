package render_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/render"
)

// TestOverLimitObjectsGetStatusesTheAPIServerStores: objects that bypassed
// the API server with lists over the Gateway API's limits (a Gateway and a
// ListenerSet with 65 listeners, a route with 40 parentRefs) are refused,
// and their statuses still fit what the API server stores (64 listeners,
// 32 parents); the other objects keep working.
func TestOverLimitObjectsGetStatusesTheAPIServerStores(t *testing.T) {
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	listeners := func(n int) []gatewayv1.Listener {
		var out []gatewayv1.Listener
		for i := range n {
			out = append(out, gatewayv1.Listener{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", i)), Port: gatewayv1.PortNumber(10000 + i), Protocol: gatewayv1.HTTPProtocolType})
		}
		return out
	}
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "big"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx", Listeners: listeners(65)}})
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx", Listeners: listeners(40),
		AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}}})
	set := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "set"}, Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw"}}}
	for _, l := range listeners(65) {
		set.Spec.Listeners = append(set.Spec.Listeners, gatewayv1.ListenerEntry{Name: l.Name, Port: l.Port + 1000, Protocol: l.Protocol})
	}
	in.Add(set)
	route := func(name string, parents int) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		for i := range parents {
			r.Spec.ParentRefs = append(r.Spec.ParentRefs, gatewayv1.ParentReference{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName(fmt.Sprintf("l%d", i)))})
		}
		return r
	}
	in.Add(route("many-parents", 40))
	in.Add(route("fine", 2))

	res := render.Render(in, goldenTime)
	checkStatusBounds(t, res.Statuses)
	for _, o := range res.Statuses {
		switch s := o.(type) {
		case *gatewayv1.Gateway:
			c := meta.FindStatusCondition(s.Status.Conditions, string(gatewayv1.GatewayConditionAccepted))
			if over := s.Name == "big"; (c.Status == metav1.ConditionFalse) != over || over && !strings.Contains(c.Message, "spec.listeners has 65 items") {
				t.Errorf("Gateway %s: %s %q", s.Name, c.Status, c.Message)
			}
		case *gatewayv1.ListenerSet:
			c := meta.FindStatusCondition(s.Status.Conditions, string(gatewayv1.ListenerSetConditionAccepted))
			if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.listeners has 65 items") {
				t.Errorf("ListenerSet: %s %q", c.Status, c.Message)
			}
		case *gatewayv1.HTTPRoute:
			ps := s.Status.Parents
			accepted := meta.IsStatusConditionTrue(ps[0].Conditions, string(gatewayv1.RouteConditionAccepted))
			if over := s.Name == "many-parents"; accepted == over || over && len(ps) != 32 || !over && len(ps) != 2 {
				t.Errorf("HTTPRoute %s: accepted=%v with %d parents: %+v", s.Name, accepted, len(ps), ps[0].Conditions)
			}
		}
	}
}
