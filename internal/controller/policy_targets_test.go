package controller

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/scheme"
)

// TestBackendTLSCA: a ConfigMap's or Secret's change concerns the
// Gateways only when a BackendTLSPolicy of its namespace takes CA
// certificates from it: tenants' other ConfigMaps change often.
func TestBackendTLSCA(t *testing.T) {
	policy1 := &gatewayv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p1"},
		Spec: gatewayv1.BackendTLSPolicySpec{Validation: gatewayv1.BackendTLSPolicyValidation{
			CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}, {Kind: "Secret", Name: "ca-secret"}}}},
	}
	policy2 := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "p2"}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(policy1, policy2).Build()
	object := func(kind, ns, name string) *metav1.PartialObjectMetadata {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		return m
	}
	for _, c2 := range []struct {
		name string
		o    *metav1.PartialObjectMetadata
		want bool
	}{
		{"a policy's CA ConfigMap", object("ConfigMap", "ns", "ca"), true},
		{"a policy's CA Secret", object("Secret", "ns", "ca-secret"), true},
		{"a tenant's other ConfigMap", object("ConfigMap", "ns", "app-config"), false},
		{"a Secret named as the CA ConfigMap", object("Secret", "ns", "ca"), false},
		{"a ConfigMap of the same name in another namespace", object("ConfigMap", "other", "ca"), false},
	} {
		if got := backendTLSCA(context.Background(), c, c2.o, c2.o.Kind); got != c2.want {
			t.Errorf("%s: %v, want %v", c2.name, got, c2.want)
		}
	}
}
