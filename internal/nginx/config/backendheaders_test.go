package config

import (
	"reflect"
	"testing"

	"github.com/gatewall/gatewall/internal/graph"
)

func TestComposeHeaders(t *testing.T) {
	h := func(n, v string) graph.Header { return graph.Header{Name: n, Value: v} }
	rule := &graph.HeaderModifier{
		Set:    []graph.Header{h("X-Set", "r"), h("X-Set-Then-Add", "r")},
		Add:    []graph.Header{h("X-Add", "r"), h("X-Add-Then-Set", "r")},
		Remove: []string{"X-Removed-Then-Add", "X-Kept-Removed"},
	}
	backend := &graph.HeaderModifier{
		Set:    []graph.Header{h("x-add-then-set", "b"), h("X-New", "b")},
		Add:    []graph.Header{h("X-Add", "b"), h("X-Set-Then-Add", "b"), h("X-Removed-Then-Add", "b")},
		Remove: []string{"X-Set"},
	}
	got := composeHeaders(rule, backend)
	want := &graph.HeaderModifier{
		Set:    []graph.Header{h("X-Set-Then-Add", "r,b"), h("X-Add-Then-Set", "b"), h("X-Removed-Then-Add", "b"), h("X-New", "b")},
		Add:    []graph.Header{h("X-Add", "r,b")},
		Remove: []string{"X-Set", "X-Kept-Removed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("composeHeaders:\n got %+v\nwant %+v", got, want)
	}
	if composeHeaders(rule, nil) != rule {
		t.Error("no backend modifier must leave the rule's as is")
	}
}
