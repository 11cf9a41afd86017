package controller

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/scheme"
)

// TestPoliciesOfGateway: a data-plane change of one Gateway wakes the
// policies that have it as an ancestor (through a Gateway or a route
// target), not the others.
func TestPoliciesOfGateway(t *testing.T) {
	psp := func(name, kind, target string) *v1alpha1.ProxySettingsPolicy {
		return &v1alpha1.ProxySettingsPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: v1alpha1.ProxySettingsPolicySpec{TargetRefs: []gatewayv1.LocalPolicyTargetReference{
				{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target)},
			}},
		}
	}
	route := &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r1"},
		Spec:       gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw1"}}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		route, psp("on-route", "HTTPRoute", "r1"), psp("on-gw1", "Gateway", "gw1"), psp("on-gw2", "Gateway", "gw2"),
	).Build()
	of := policiesOfGateway(c, Config{}, policy.KindNamed("ProxySettingsPolicy"))
	got := of(context.Background(), types.NamespacedName{Namespace: "ns", Name: "gw1"})
	want := []reconcile.Request{
		{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "on-gw1"}},
		{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "on-route"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("policies of gw1: %v, want %v", got, want)
	}
}

// TestPoliciesOfConfigMap: a ConfigMap change wakes the BackendTLSPolicies
// (a pass over them) only when one of its namespace takes CA certificates
// from it: tenants' other ConfigMaps change often.
func TestPoliciesOfConfigMap(t *testing.T) {
	policy1 := &gatewayv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p1"},
		Spec: gatewayv1.BackendTLSPolicySpec{Validation: gatewayv1.BackendTLSPolicyValidation{
			CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}, {Kind: "Secret", Name: "ca-secret"}}}},
	}
	policy2 := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "p2"}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(policy1, policy2).Build()
	r := &PolicyReconciler{Client: c, Kind: policy.KindNamed("BackendTLSPolicy")}
	object := func(kind, ns, name string) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		return m
	}
	for _, c := range []struct {
		name string
		o    *metav1.PartialObjectMetadata
		want int
	}{
		{"a policy's CA ConfigMap asks for a pass over every policy", object("ConfigMap", "ns", "ca"), 1},
		{"a policy's CA Secret too", object("Secret", "ns", "ca-secret"), 1},
		{"a tenant's other ConfigMap wakes none", object("ConfigMap", "ns", "app-config"), 0},
		{"a Secret named as the CA ConfigMap wakes none", object("Secret", "ns", "ca"), 0},
		{"a ConfigMap of the same name in another namespace wakes none", object("ConfigMap", "other", "ca"), 0},
	} {
		if got := r.policiesOfCA(c.o.Kind)(context.Background(), c.o); len(got) != c.want {
			t.Errorf("%s: %v, want %d requests", c.name, got, c.want)
		}
	}
}

// gatewayReads counts the Gateways it is asked for.
type gatewayReads struct {
	client.Reader
	gets map[string]int
}

func (r *gatewayReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*gatewayv1.Gateway); ok {
		if r.gets == nil {
			r.gets = map[string]int{}
		}
		r.gets[key.String()]++
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}
