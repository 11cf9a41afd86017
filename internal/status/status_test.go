package status

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
)

// TestListenerStatusesHaveUniqueNames: the API server refuses a status
// that lists a listener name twice, so a Gateway whose listeners repeat a
// name (the graph refuses it) reports the first of each name only.
func TestListenerStatusesHaveUniqueNames(t *testing.T) {
	listener := func(name string, port gatewayv1.PortNumber) *graph.Listener {
		return &graph.Listener{Name: name, Source: gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port}}
	}
	g := &graph.Gateway{
		Source:    &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"}},
		Listeners: []*graph.Listener{listener("http", 80), listener("http", 8080), listener("other", 81)},
	}
	st := Gateway(g, Offline, nil, nil, nil, gatewayv1.GatewayStatus{}, now)
	var names []gatewayv1.SectionName
	for _, l := range st.Listeners {
		names = append(names, l.Name)
	}
	if len(names) != 2 || names[0] != "http" || names[1] != "other" {
		t.Errorf("listener statuses %v, want http and other", names)
	}
}

// TestRouteParentsFitTheAPIServer: a route's status lists at most 32
// parents (the API server refuses more): other controllers' entries are
// kept first, as they are, then this controller's in parentRef order.
func TestRouteParentsFitTheAPIServer(t *testing.T) {
	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r"}}
	var parents []gatewayv1.RouteParentStatus
	for i := range 40 {
		ref := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(fmt.Sprintf("gw%02d", i))}
		route.Spec.ParentRefs = append(route.Spec.ParentRefs, ref)
		parents = append(parents, gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "ours"})
	}
	for i := range 5 {
		parents = append(parents, gatewayv1.RouteParentStatus{ParentRef: gatewayv1.ParentReference{Name: gatewayv1.ObjectName(fmt.Sprintf("theirs%d", i))}, ControllerName: "theirs"})
	}
	got := OrderRouteParents(route, "default", parents, "ours")
	if len(got) != 32 || got[0].ControllerName != "theirs" || got[4].ControllerName != "theirs" || got[5].ParentRef.Name != "gw00" || got[31].ParentRef.Name != "gw26" {
		t.Errorf("got %d parents, first %s/%s, sixth %s, last %s", len(got), got[0].ControllerName, got[0].ParentRef.Name, got[5].ParentRef.Name, got[31].ParentRef.Name)
	}
}
