package manager_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func backendTLSPolicy(ns, name, svc string) *gatewayv1.BackendTLSPolicy {
	return &gatewayv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
				Group: "", Kind: "Service", Name: gatewayv1.ObjectName(svc)}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{
				WellKnownCACertificates: ptr.To(gatewayv1.WellKnownCACertificatesSystem), Hostname: gatewayv1.PreciseHostname(svc + ".example.com")},
		},
	}
}

// TestBackendTLSPolicyAncestors: the manager reports as a BackendTLSPolicy's
// ancestors the Gateways that proxy to its Service, a mirror included, as
// gatewall render does (golden backend-tls-ancestors); a Service used only
// by TLSRoutes, whose bytes NGINX passes on, makes none.
func TestBackendTLSPolicyAncestors(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	gw := gateway(ns, "gw")
	gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "pass", Port: 443, Protocol: gatewayv1.TLSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}})
	web := httpRoute(ns, "web", "gw", "app")
	web.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
		BackendRef: gatewayv1.BackendObjectReference{Name: "audit", Port: ptr.To(gatewayv1.PortNumber(80))}}}}
	vault := &gatewayv1.TLSRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"},
		Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"vault.example.com"},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: "vault", Port: ptr.To(gatewayv1.PortNumber(80))}}}}},
		},
	}
	create(t, service(ns, "app"), service(ns, "audit"), service(ns, "vault"), gw, web, vault,
		backendTLSPolicy(ns, "vault-tls", "vault"), backendTLSPolicy(ns, "audit-tls", "audit"))
	ancestors := func(name string) ([]string, error) {
		as, err := backendTLSAncestors(ctx, types.NamespacedName{Namespace: ns, Name: name})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, a := range as {
			var types []string
			for _, c := range a.Conditions {
				types = append(types, c.Type)
			}
			if fmt.Sprint(types) != "[Accepted ResolvedRefs]" {
				return nil, fmt.Errorf("%s has conditions %v on %s, want the Gateway API's Accepted and ResolvedRefs", name, types, a.AncestorRef.Name)
			}
			out = append(out, fmt.Sprintf("%s/%s", ptr.Deref(a.AncestorRef.Namespace, ""), a.AncestorRef.Name))
		}
		return out, nil
	}
	eventually(t, 15*time.Second, func() error {
		got, err := ancestors("audit-tls")
		if err != nil || len(got) != 1 || got[0] != ns+"/gw" {
			return fmt.Errorf("audit-tls (a mirror's Service) has ancestors %v (%v), want %s/gw", got, err, ns)
		}
		return nil
	})
	// Both policies are reconciled on every change of either; give the
	// other a moment more.
	time.Sleep(time.Second)
	if got, err := ancestors("vault-tls"); err != nil || len(got) != 0 {
		t.Errorf("vault-tls (a TLSRoute's Service) has ancestors %v (%v), want none", got, err)
	}
}

// TestBackendTLSPolicyTargetNotFound: a BackendTLSPolicy on a Service that
// does not exist says so under the Service, as Gatewall's own policies do,
// with the Gateway API's conditions only (no Programmed); creating the
// Service ends it (the engine's reconciler watches Services).
func TestBackendTLSPolicyTargetNotFound(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	create(t, backendTLSPolicy(ns, "ghost-tls", "ghost"))
	key := types.NamespacedName{Namespace: ns, Name: "ghost-tls"}
	eventually(t, 15*time.Second, func() error {
		as, err := backendTLSAncestors(ctx, key)
		if err != nil {
			return err
		}
		if len(as) != 1 {
			return fmt.Errorf("ancestors %+v, want the Service's TargetNotFound", as)
		}
		a := as[0]
		if ptr.Deref(a.AncestorRef.Kind, "") != "Service" || a.AncestorRef.Name != "ghost" {
			return fmt.Errorf("ancestorRef %+v, want Service ghost", a.AncestorRef)
		}
		if len(a.Conditions) != 1 || a.Conditions[0].Type != "Accepted" || a.Conditions[0].Reason != "TargetNotFound" {
			return fmt.Errorf("conditions %+v, want only Accepted=False TargetNotFound", a.Conditions)
		}
		return nil
	})
	create(t, service(ns, "ghost"))
	eventually(t, 15*time.Second, func() error {
		as, err := backendTLSAncestors(ctx, key)
		if err != nil {
			return err
		}
		if len(as) != 0 {
			return fmt.Errorf("ancestors %+v after the Service was created, want none (no Gateway proxies to it)", as)
		}
		return nil
	})
}

// backendTLSAncestors is a BackendTLSPolicy's ancestors now.
func backendTLSAncestors(ctx context.Context, key types.NamespacedName) ([]gatewayv1.PolicyAncestorStatus, error) {
	p := &gatewayv1.BackendTLSPolicy{}
	if err := env.Client.Get(ctx, key, p); err != nil {
		return nil, err
	}
	return p.Status.Ancestors, nil
}
