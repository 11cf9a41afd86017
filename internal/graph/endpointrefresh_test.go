package graph

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestRefreshServicesReadsChangedOnly: after a first refresh, a refresh
// given only the changed Service's slices keeps the other Service's
// endpoints from the last refresh; given a last that lacks the other
// Service's upstream (not a refresh of this graph), it does not read that
// Service from an input that has none of its slices, and asks for a
// translation instead.
func TestRefreshServicesReadsChangedOnly(t *testing.T) {
	var objs []any
	objs = append(objs, bigService("a", 3, 0, 1)...)
	objs = append(objs, bigService("b", 2, 1<<20, 1)...)
	objs = append(objs, routeTo("r", 1, "a", "b"))
	in := testInput(objs...)
	g := buildTest(t, in)
	first, ok := g.RefreshEndpoints(in)
	if !ok || len(first) != 2 {
		t.Fatalf("first refresh: %t, %d upstreams; want both Services'", ok, len(first))
	}
	// Service a scales to 5 endpoints; the input holds a's slices only.
	changed := map[types.NamespacedName]bool{key("ns", "a"): true}
	only := NewInput(in.ControllerName)
	for _, o := range bigService("a", 5, 0, 1)[1:] {
		only.Add(o.(*discoveryv1.EndpointSlice))
	}
	got, ok := g.RefreshServices(only, changed, first)
	if !ok {
		t.Fatal("a refresh of the changed Service asked for a translation")
	}
	counts := map[int]int{}
	for _, f := range got {
		counts[len(f.Endpoints)]++
	}
	if counts[5] != 1 || counts[2] != 1 {
		t.Errorf("endpoints per upstream %v; want a's 5 read and b's 2 kept", counts)
	}
	// A last without b's upstream: b would be read from only, which has
	// none of its slices.
	partial := map[UpstreamKey]UpstreamEndpoints{}
	for k, f := range first {
		if len(f.Endpoints) == 3 {
			partial[k] = f
		}
	}
	if got, ok := g.RefreshServices(only, changed, partial); ok {
		t.Errorf("a last lacking an unchanged Service's upstream gave %v; want a translation", got)
	}
}
