package graph

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/plm"
)

// fingerprinted are the Input fields Fingerprint reads; the rest are
// derived (sliceIndex). A field added to Input must be added to
// Fingerprint, or a change to it would leave a stale configuration in
// place: this test fails until it is listed here.
var fingerprinted = []string{
	"ControllerName", "GatewayClasses", "Gateways", "ListenerSets", "Routes", "ReferenceGrants",
	"Namespaces", "Services", "EndpointSlices", "Secrets", "ConfigMaps", "BackendTLSPolicies", "NginxProxies",
	"Filters", "Policies", "PLMGroup", "PLMScope", "APPolicies", "APLogConfs", "Bundles", "WAFModule",
	"Snippets",
	// An NginxProxy stub counts by its entry in unreadable (its reason):
	// translation reads nothing else of it.
	"unreadable", "UnreadableNginxProxies",
}

func TestFingerprintCoversEveryInputField(t *testing.T) {
	typ := reflect.TypeOf(Input{})
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if name != "sliceIndex" && !slices.Contains(fingerprinted, name) {
			t.Errorf("Input.%s is not in the fingerprint", name)
		}
	}
}

func TestFingerprintChangesWithEveryChange(t *testing.T) {
	route := func(generation int64) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "r", UID: "u1", ResourceVersion: "5", Generation: generation}}
	}
	secret := func(rv string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "s", UID: "u2", ResourceVersion: rv}}
	}
	base := func() *Input {
		in := NewInput("ctrl")
		in.Add(route(1))
		in.Add(secret("3"))
		return in
	}
	want, ok := base().Fingerprint()
	if !ok {
		t.Fatal("an input of objects with resourceVersions has no fingerprint")
	}
	if again, _ := base().Fingerprint(); again != want {
		t.Error("the same input has two fingerprints")
	}
	for name, change := range map[string]func(*Input){
		"a route's spec changed": func(in *Input) { in.Add(route(2)) },
		"a Secret changed":       func(in *Input) { in.Add(secret("4")) },
		"a route added": func(in *Input) {
			r := route(1)
			r.Name = "other"
			in.Add(r)
		},
		"a route deleted":       func(in *Input) { delete(in.Routes[KindHTTPRoute], key("apps", "r")) },
		"a PLM status changed":  func(in *Input) { in.APPolicies[key("apps", "p")] = &plm.Status{} },
		"a bundle fetched":      func(in *Input) { in.Bundles["sha"] = Bundle{State: BundleFetched, Data: []byte("x")} },
		"an object not decoded": func(in *Input) { in.AddUnreadable(ObjectRef{Kind: "HTTPRoute", Key: key("apps", "bad")}, "bad") },
		"the WAF module moved":  func(in *Input) { in.WAFModule = "/x.so" },
		"the storage scope":     func(in *Input) { in.PLMScope = plm.Scope{Bucket: "plm", Prefix: "bundles"} },
		"snippets enabled":      func(in *Input) { in.Snippets = true },
	} {
		in := base()
		change(in)
		if got, _ := in.Fingerprint(); got == want {
			t.Errorf("%s: the fingerprint did not change", name)
		}
	}
	// Gatewall's own status write (a new resourceVersion, the same
	// generation) changes nothing translation reads.
	in := base()
	r := route(1)
	r.ResourceVersion = "6"
	in.Add(r)
	if got, _ := in.Fingerprint(); got != want {
		t.Error("a route's status write changed the fingerprint")
	}
	in = base()
	in.Add(route(0))
	if _, ok := in.Fingerprint(); ok {
		t.Error("a route without a generation left the fingerprint usable")
	}
	in = base()
	in.Add(secret(""))
	if _, ok := in.Fingerprint(); ok {
		t.Error("a Secret without a resourceVersion left the fingerprint usable")
	}
}

// The fingerprint without EndpointSlices tells a change of endpoints alone
// (which the Gateway reconciler refreshes without translating) from the
// rest; a slice that cannot be read is not a change of endpoints alone.
func TestFingerprintWithoutSlices(t *testing.T) {
	slice := func(name, rv string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, UID: types.UID("u-" + name), ResourceVersion: rv}}
	}
	base := func() *Input {
		in := NewInput("ctrl")
		in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "s", UID: "u2", ResourceVersion: "3"}})
		in.Add(slice("a", "7"))
		return in
	}
	all, rest, ok := base().Fingerprints()
	if !ok {
		t.Fatal("no fingerprint")
	}
	for name, change := range map[string]func(*Input){
		"a slice changed": func(in *Input) { in.Add(slice("a", "8")) },
		"a slice added":   func(in *Input) { in.Add(slice("b", "1")) },
		"a slice deleted": func(in *Input) { delete(in.EndpointSlices, key("apps", "a")) },
	} {
		in := base()
		change(in)
		gotAll, gotRest, _ := in.Fingerprints()
		if gotAll == all {
			t.Errorf("%s: the fingerprint did not change", name)
		}
		if gotRest != rest {
			t.Errorf("%s: the fingerprint without slices changed", name)
		}
	}
	for name, change := range map[string]func(*Input){
		"a Secret changed": func(in *Input) {
			in.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "s", UID: "u2", ResourceVersion: "4"}})
		},
		"a slice not decoded": func(in *Input) { in.AddUnreadable(ObjectRef{Kind: "EndpointSlice", Key: key("apps", "bad")}, "bad") },
	} {
		in := base()
		change(in)
		if _, gotRest, _ := in.Fingerprints(); gotRest == rest {
			t.Errorf("%s: the fingerprint without slices did not change", name)
		}
	}
	if got, _ := base().Fingerprint(); got != all {
		t.Error("Fingerprint is not Fingerprints' first digest")
	}
}
