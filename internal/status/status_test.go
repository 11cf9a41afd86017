package status

import (
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
