package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/test/testenv"
)

func psp(ns, name, kind, target string, b v1alpha1.ProxyBuffering) *v1alpha1.ProxySettingsPolicy {
	return &v1alpha1.ProxySettingsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ProxySettingsPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target)}},
			Buffering:  &b,
		},
	}
}

// ancestorConditions returns "Accepted=…/…, Programmed=…/…: message" of a
// policy's status for one Gateway.
func ancestorConditions(key types.NamespacedName, gw string) (string, string, error) {
	return policyAncestorConditions(&v1alpha1.ProxySettingsPolicy{}, key, gw)
}

// policyAncestorConditions is ancestorConditions for a policy of any kind
// (p is an empty object of the kind).
func policyAncestorConditions(p v1alpha1.PolicyWithStatus, key types.NamespacedName, gw string) (string, string, error) {
	if err := env.Client.Get(context.Background(), key, p); err != nil {
		return "", "", err
	}
	for _, a := range p.PolicyStatus().Ancestors {
		if string(a.AncestorRef.Name) == gw {
			prog := ""
			for _, c := range a.Conditions {
				if c.Type == "Programmed" {
					prog = c.Message
				}
			}
			acc := ""
			for _, c := range a.Conditions {
				if c.Type == "Accepted" {
					acc = c.Message
				}
			}
			return fmt.Sprintf("Accepted=%s Programmed=%s", condition(a.Conditions, "Accepted"), condition(a.Conditions, "Programmed")), acc + " | " + prog, nil
		}
	}
	return "<no ancestor>", "", nil
}

func routeAffected(key types.NamespacedName) (string, error) {
	r := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(context.Background(), key, r); err != nil {
		return "", err
	}
	for _, p := range r.Status.Parents {
		return condition(p.Conditions, v1alpha1.ProxySettingsPolicyAffected), nil
	}
	return "<no parent>", nil
}

// TestProxySettingsPolicyStatuses: the policy's conditions and the Affected
// conditions on its targets appear, change and disappear with the policy.
func TestProxySettingsPolicyStatuses(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.3.1"), gateway(ns, "gw"), httpRoute(ns, "r", "gw", "app"))
	gwKey, routeKey := types.NamespacedName{Namespace: ns, Name: "gw"}, types.NamespacedName{Namespace: ns, Name: "r"}
	routePolicy := psp(ns, "route-buffers", "HTTPRoute", "r", v1alpha1.ProxyBuffering{BufferSize: ptr.To(v1alpha1.Size("8k"))})
	create(t, routePolicy)
	policyKey := client.ObjectKeyFromObject(routePolicy)
	include := config.RouteIncludePath("proxy-settings", graph.ObjectRef{Kind: "HTTPRoute", Key: routeKey})

	t.Run("accepted, rendered, affected; not programmed without a data plane", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			got, msg, err := ancestorConditions(policyKey, "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=True/Accepted Programmed=False/Pending" {
				return fmt.Errorf("%s (%s)", got, msg)
			}
			if aff, err := routeAffected(routeKey); err != nil || aff != "True/PolicyAffected" {
				return fmt.Errorf("route Affected is %s, %v", aff, err)
			}
			if f := heldFile(gwKey, include); !strings.Contains(f, "proxy_buffer_size 8k;") {
				return fmt.Errorf("the route's include file is %q", f)
			}
			return nil
		})
	})

	t.Run("refused when NGINX would reject the effective settings", func(t *testing.T) {
		cur := &v1alpha1.ProxySettingsPolicy{}
		if err := env.Client.Get(ctx, policyKey, cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Buffering.BufferSize = ptr.To(v1alpha1.Size("16k"))
		if err := env.Client.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, func() error {
			got, msg, err := ancestorConditions(policyKey, "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=False/Invalid Programmed=False/Invalid" || !strings.Contains(msg, "NGINX would reject") || !strings.Contains(msg, policyKey.String()) {
				return fmt.Errorf("%s (%s)", got, msg)
			}
			if aff, _ := routeAffected(routeKey); aff != "<none>" {
				return fmt.Errorf("route Affected is %s, want none: the refused policy changes nothing", aff)
			}
			if f := heldFile(gwKey, include); f != "" {
				return fmt.Errorf("the refused policy is still rendered: %q", f)
			}
			return nil
		})
		// Its owner hears of it through the Events API, once.
		eventually(t, 15*time.Second, func() error {
			evs, err := eventsAbout(policyKey, "Invalid")
			if err != nil {
				return err
			}
			if len(evs) != 1 || evs[0].Type != "Warning" || !strings.Contains(evs[0].Note, "NGINX would reject") {
				return fmt.Errorf("Invalid events of the policy: %+v, want one warning saying NGINX would reject it", evs)
			}
			return nil
		})
	})

	t.Run("PartiallyInvalid under an inherited disable", func(t *testing.T) {
		cur := &v1alpha1.ProxySettingsPolicy{}
		if err := env.Client.Get(ctx, policyKey, cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Buffering.BufferSize = ptr.To(v1alpha1.Size("8k"))
		if err := env.Client.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		create(t, psp(ns, "gateway-off", "Gateway", "gw", v1alpha1.ProxyBuffering{Disable: ptr.To(true)}))
		eventually(t, 15*time.Second, func() error {
			got, msg, err := ancestorConditions(policyKey, "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=True/Accepted Programmed=False/PartiallyInvalid" {
				return fmt.Errorf("%s (%s)", got, msg)
			}
			gw, err := getGateway(gwKey)
			if err != nil {
				return err
			}
			if c := condition(gw.Status.Conditions, v1alpha1.ProxySettingsPolicyAffected); c != "True/PolicyAffected" {
				return fmt.Errorf("Gateway Affected is %s", c)
			}
			return nil
		})
	})

	t.Run("Affected conditions go with the last policy", func(t *testing.T) {
		for _, name := range []string{"route-buffers", "gateway-off"} {
			if err := env.Client.Delete(ctx, &v1alpha1.ProxySettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 15*time.Second, func() error {
			gw, err := getGateway(gwKey)
			if err != nil {
				return err
			}
			if c := condition(gw.Status.Conditions, v1alpha1.ProxySettingsPolicyAffected); c != "<none>" {
				return fmt.Errorf("Gateway Affected is still %s", c)
			}
			if aff, _ := routeAffected(routeKey); aff != "<none>" {
				return fmt.Errorf("route Affected is still %s", aff)
			}
			return nil
		})
	})
}

// TestProxySettingsPolicyOnSeveralRoutes: a policy refused on one of its
// routes (NGINX would reject the effective settings there) still renders on
// the others; its status says so instead of claiming nothing is configured.
func TestProxySettingsPolicyOnSeveralRoutes(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.4.1"), gateway(ns, "gw"),
		httpRoute(ns, "r1", "gw", "app"), httpRoute(ns, "r2", "gw", "app"))
	gwKey := types.NamespacedName{Namespace: ns, Name: "gw"}
	include := func(route string) string {
		return config.RouteIncludePath("proxy-settings", graph.ObjectRef{Kind: "HTTPRoute", Key: types.NamespacedName{Namespace: ns, Name: route}})
	}
	both := psp(ns, "both", "HTTPRoute", "r1", v1alpha1.ProxyBuffering{BufferSize: ptr.To(v1alpha1.Size("8k"))})
	both.Spec.TargetRefs = append(both.Spec.TargetRefs, gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "r2"})
	create(t, both)
	// With 4 x 4k buffers, the busy size defaults to twice 8k, more than 3 x 4k: refused on r1.
	small := psp(ns, "small-buffers", "HTTPRoute", "r1", v1alpha1.ProxyBuffering{Buffers: &v1alpha1.ProxyBuffers{Number: 4, Size: "4k"}})
	create(t, small)

	eventually(t, 15*time.Second, func() error {
		got, msg, err := ancestorConditions(client.ObjectKeyFromObject(both), "gw")
		if err != nil {
			return err
		}
		if got != "Accepted=True/Accepted Programmed=False/PartiallyInvalid" || !strings.Contains(msg, "HTTPRoute "+ns+"/r1") {
			return fmt.Errorf("policy on both routes: %s (%s)", got, msg)
		}
		if got, msg, err = ancestorConditions(client.ObjectKeyFromObject(small), "gw"); err != nil || got != "Accepted=False/Invalid Programmed=False/Invalid" {
			return fmt.Errorf("policy on r1 only: %s (%s), %v", got, msg, err)
		}
		if f := heldFile(gwKey, include("r2")); !strings.Contains(f, "proxy_buffer_size 8k;") {
			return fmt.Errorf("r2's include file is %q", f)
		}
		if f := heldFile(gwKey, include("r1")); f != "" {
			return fmt.Errorf("r1's include file is %q; want none: both policies are refused there", f)
		}
		return nil
	})
}

// eventsAbout lists the Events regarding the object key with the reason.
func eventsAbout(key types.NamespacedName, reason string) ([]eventsv1.Event, error) {
	return testenv.EventsAbout(env.Client, key, reason)
}

// TestPolicyFollowsGatewayClass: a policy's ancestors follow everything its
// Gateway's translation reads, not only the kinds the policy reconciler
// watches. Applied in the order `kubectl apply -f dir/` takes (gateway.yaml
// before gatewayclass.yaml), the policy has no ancestor until the class
// exists, then gets one without any further change to the policy, the
// Gateway or a route.
func TestPolicyFollowsGatewayClass(t *testing.T) {
	ns := namespace(t)
	class := gatewayClass()
	class.Name = "late-" + ns
	gw := gateway(ns, "gw")
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(class.Name)
	p := psp(ns, "gateway-buffers", "Gateway", "gw", v1alpha1.ProxyBuffering{BufferSize: ptr.To(v1alpha1.Size("8k"))})
	create(t, gw, p)
	key := client.ObjectKeyFromObject(p)
	// Reconciled without the class: no ancestor (the Gateway is no
	// Gatewall Gateway yet).
	time.Sleep(2 * time.Second)
	if got, msg, err := ancestorConditions(key, "gw"); err != nil || got != "<no ancestor>" {
		t.Fatalf("before the GatewayClass exists the policy has %s (%s), %v", got, msg, err)
	}
	create(t, class)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), class) })
	eventually(t, 15*time.Second, func() error {
		got, msg, err := ancestorConditions(key, "gw")
		if err != nil {
			return err
		}
		if got != "Accepted=True/Accepted Programmed=False/Pending" {
			return fmt.Errorf("%s (%s)", got, msg)
		}
		return nil
	})
}
