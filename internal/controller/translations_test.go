package controller

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/scheme"
	"github.com/gatewall/gatewall/internal/translate"
)

// translationInput is a snapshot of Gateway ns/gw (of class class, which
// Gatewall serves when it is "ours") with the policies given.
func translationInput(class string, generation int64, policies ...*v1alpha1.ProxySettingsPolicy) *graph.Input {
	in := graph.NewInput("example.com/ctrl")
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ours", Generation: 1, UID: "class"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/ctrl"}})
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw", Generation: generation, UID: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class),
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}})
	for _, p := range policies {
		in.Add(p)
	}
	return in
}

func proxySettings(generation int64, resourceVersion string) *v1alpha1.ProxySettingsPolicy {
	return &v1alpha1.ProxySettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "p",
		Generation: generation, ResourceVersion: resourceVersion},
		Spec: v1alpha1.ProxySettingsPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReference{
			{Group: gatewayv1.GroupName, Kind: "Gateway", Name: "gw"}}}}
}

// TestPoliciesReadTheGatewayReconcilersTranslation: a policy's pass takes
// the Gateway reconciler's kept translation when its input held the policy
// as the pass reads it, and otherwise translates nothing: it waits, and
// asks the Gateway reconciler for a new translation.
func TestPoliciesReadTheGatewayReconcilersTranslation(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "gw"}
	ref := graph.ObjectRef{Kind: "ProxySettingsPolicy", Key: types.NamespacedName{Namespace: "ns", Name: "p"}}
	version := func(p *v1alpha1.ProxySettingsPolicy) string { return graph.PolicyVersion(ref.Kind, p) }
	existing := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gw"}}).Build()
	for _, c := range []struct {
		name string
		// kept is the Gateway reconciler's input (nil: it has kept none).
		kept    *graph.Input
		policy  *v1alpha1.ProxySettingsPolicy
		found   bool
		waiting bool
	}{
		{"the policy as the translation saw it", translationInput("ours", 1, proxySettings(1, "5")), proxySettings(1, "5"), true, false},
		{"a status write does not make the translation older", translationInput("ours", 1, proxySettings(1, "5")), proxySettings(1, "6"), true, false},
		{"a spec change after the translation", translationInput("ours", 1, proxySettings(1, "5")), proxySettings(2, "7"), false, true},
		{"a policy created after the translation", translationInput("ours", 1), proxySettings(1, "5"), false, true},
		{"no translation kept yet", nil, proxySettings(1, "5"), false, true},
		{"a Gateway that is not Gatewall's", translationInput("theirs", 1, proxySettings(1, "5")), proxySettings(1, "5"), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := NewTranslations()
			asked := &subscriber{ch: make(chan event.GenericEvent, 1)}
			cache.outdated.subs = append(cache.outdated.subs, asked)
			r := &GatewayReconciler{Config: Config{Translations: cache}}
			var kept *translate.Translation
			if c.kept != nil {
				kept, _ = r.translate(c.kept, key)
			}
			ts, _, waiting, err := gatewayTranslations{}.kept(context.Background(), existing, Config{Translations: cache},
				[]types.NamespacedName{key}, ref, version(c.policy))
			if err != nil {
				t.Fatal(err)
			}
			if found := len(ts) == 1 && ts[0] == kept && kept != nil; found != c.found || len(ts) > 1 {
				t.Errorf("translations %v, want the kept one: %v", ts, c.found)
			}
			_, askedFor := asked.take()
			if waiting != c.waiting || (len(askedFor) == 1) != c.waiting {
				t.Errorf("waiting %v, asked for %v; want waiting %v and the Gateway asked for then", waiting, askedFor, c.waiting)
			}
		})
	}
}

// TestPassLooksUpEachGatewayOnce: the policies of one pass share the
// lookup of a Gateway: one that does not exist is read once, a kept
// translation is not read from the API at all.
func TestPassLooksUpEachGatewayOnce(t *testing.T) {
	reads := &gatewayReads{Reader: fake.NewClientBuilder().WithScheme(scheme.New()).Build()}
	cache := NewTranslations()
	gw, gone := types.NamespacedName{Namespace: "ns", Name: "gw"}, types.NamespacedName{Namespace: "ns", Name: "gone"}
	r := &GatewayReconciler{Config: Config{Translations: cache}}
	kept, _ := r.translate(translationInput("ours", 1, proxySettings(1, "1")), gw)
	if kept == nil || kept.Files == nil {
		t.Fatal("the Gateway did not translate to files")
	}
	ref := graph.ObjectRef{Kind: "ProxySettingsPolicy", Key: types.NamespacedName{Namespace: "ns", Name: "p"}}
	pass := gatewayTranslations{}
	for range 3 {
		ts, versions, waiting, err := pass.kept(context.Background(), reads, Config{Translations: cache},
			[]types.NamespacedName{gw, gone}, ref, graph.PolicyVersion(ref.Kind, proxySettings(1, "1")))
		if err != nil || waiting || len(ts) != 1 || ts[0] != kept || versions[gw] == "" || len(versions) != 1 {
			t.Fatalf("translations %v, versions %v, waiting %v, %v: want the kept translation of ns/gw only", ts, versions, waiting, err)
		}
	}
	if reads.gets["ns/gw"] != 0 || reads.gets["ns/gone"] != 1 {
		t.Errorf("Gateway reads %v, want ns/gw never read and ns/gone read once", reads.gets)
	}
}
