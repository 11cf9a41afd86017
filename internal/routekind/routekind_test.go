package routekind

import (
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Every route kind of the Gateway API's v1 group is registered, and each
// registration's functions read and write its own kind's fields.
func TestEveryV1RouteKindIsRegistered(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := gatewayv1.Install(scheme); err != nil {
		t.Fatal(err)
	}
	var names []string
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == gatewayv1.GroupVersion.Version && len(gvk.Kind) > 5 && gvk.Kind[len(gvk.Kind)-5:] == "Route" {
			names = append(names, gvk.Kind)
		}
	}
	sort.Strings(names)
	var got []string
	for _, k := range Kinds {
		got = append(got, k.Name)
	}
	if !reflect.DeepEqual(got, names) {
		t.Fatalf("registered %v, the v1 API has %v (sorted by name)", got, names)
	}
}

func TestKindFunctions(t *testing.T) {
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			o := k.New()
			if Of(o) != k || Named(k.Name) != k {
				t.Fatalf("Of/Named do not find the kind")
			}
			if reflect.TypeOf(o).Elem().Name() != k.Name {
				t.Fatalf("New returns a %T", o)
			}
			spec, _ := k.Common(o)
			spec.ParentRefs = []gatewayv1.ParentReference{{Name: "gw"}}
			if refs := ParentRefs(o); len(refs) != 1 || refs[0].Name != "gw" {
				t.Errorf("ParentRefs: %v", refs)
			}
			parents := []gatewayv1.RouteParentStatus{{ControllerName: "x"}}
			if !SetParents(o, parents) || !reflect.DeepEqual(Parents(o), parents) {
				t.Errorf("SetParents/Parents do not round-trip")
			}
			list := k.NewList()
			if items := k.Items(list); len(items) != 0 {
				t.Errorf("an empty list has %d items", len(items))
			}
			if len(k.Backends(o)) != 0 {
				t.Errorf("an empty route has backends")
			}
		})
	}
	if Of(&gatewayv1.Gateway{}) != nil || ParentRefs(&gatewayv1.Gateway{}) != nil || SetParents(&gatewayv1.Gateway{}, nil) {
		t.Errorf("a Gateway is taken for a route")
	}
}

func TestItemsPointIntoTheList(t *testing.T) {
	l := &gatewayv1.HTTPRouteList{Items: []gatewayv1.HTTPRoute{{}, {}}}
	items := Named("HTTPRoute").Items(l)
	if len(items) != 2 || items[1] != client.Object(&l.Items[1]) {
		t.Fatalf("items %v do not point into the list", items)
	}
}

func TestBackendsIncludeMirrors(t *testing.T) {
	r := &gatewayv1.HTTPRoute{Spec: gatewayv1.HTTPRouteSpec{Rules: []gatewayv1.HTTPRouteRule{{
		BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "a"}}}},
		Filters:     []gatewayv1.HTTPRouteFilter{{RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{BackendRef: gatewayv1.BackendObjectReference{Name: "m"}}}},
	}}}}
	var names []string
	for _, b := range Of(r).Backends(r) {
		names = append(names, string(b.Name))
	}
	if !reflect.DeepEqual(names, []string{"a", "m"}) {
		t.Errorf("backends %v, want [a m]", names)
	}
}

// TestOptionalKindsSayWhatTheirAbsenceLeavesOut: the manager logs it when
// an optional kind's CRD is missing.
func TestOptionalKindsSayWhatTheirAbsenceLeavesOut(t *testing.T) {
	for _, k := range Kinds {
		if k.Optional && (k.Missing == "" || k.Since == "") {
			t.Errorf("optional kind %s: Missing %q, Since %q: both are needed", k.Name, k.Missing, k.Since)
		}
		if !k.Optional && (k.Missing != "" || k.Since != "") {
			t.Errorf("required kind %s says what its absence leaves out: it is never absent", k.Name)
		}
	}
}
