package controller

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// A change of a Service's EndpointSlices wakes the Gateways whose last
// translation read them, and every Gateway being reconciled: its snapshot
// may predate the change while its translation reads the Service for the
// first time (a route that just started using it).
func TestGatewaysUsing(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	svc, other := types.NamespacedName{Namespace: "apps", Name: "echo"}, types.NamespacedName{Namespace: "apps", Name: "other"}
	c := NewTranslations()
	c.keep(a, translated{services: map[types.NamespacedName]bool{svc: true}})
	c.keep(b, translated{services: map[types.NamespacedName]bool{other: true}})
	if got := c.GatewaysUsing(svc); !slices.Equal(got, []types.NamespacedName{a}) {
		t.Errorf("Gateways using %s: %v, want %v", svc, got, a)
	}
	done := c.reconcilingGateway(b)
	if got := c.GatewaysUsing(svc); !slices.Equal(got, []types.NamespacedName{a, b}) {
		t.Errorf("while b is reconciled: %v, want a and b", got)
	}
	done()
	if got := c.GatewaysUsing(svc); !slices.Equal(got, []types.NamespacedName{a}) {
		t.Errorf("after b's reconcile: %v, want a", got)
	}
	// A Gateway never translated yet, being reconciled.
	fresh := types.NamespacedName{Namespace: "ns", Name: "fresh"}
	done = c.reconcilingGateway(fresh)
	if got := c.GatewaysUsing(other); !slices.Equal(got, []types.NamespacedName{b, fresh}) {
		t.Errorf("while a new Gateway is reconciled: %v, want b and it", got)
	}
	done()
	c.mu.Lock()
	left := len(c.reconciling)
	c.mu.Unlock()
	if left != 0 {
		t.Errorf("%d Gateways still marked as reconciled", left)
	}
}
