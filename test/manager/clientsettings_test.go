package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/policy"
)

func csp(ns, name, kind, target string, spec v1alpha1.ClientSettingsPolicySpec) *v1alpha1.ClientSettingsPolicy {
	spec.TargetRef = gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target)}
	return &v1alpha1.ClientSettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// TestClientSettingsPolicyStatuses: a ClientSettingsPolicy on a Gateway and
// one on its route are rendered at http level and in the route's
// locations, with their ancestor statuses, the Affected conditions on the
// targets, a newer conflicting policy refused by name, and a field the
// data plane's NGINX lacks reported as not programmed.
func TestClientSettingsPolicyStatuses(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.3.9"), gateway(ns, "gw"), httpRoute(ns, "r", "gw", "app"))
	gwKey, routeKey := types.NamespacedName{Namespace: ns, Name: "gw"}, types.NamespacedName{Namespace: ns, Name: "r"}
	gwPolicy := csp(ns, "gateway-bodies", "Gateway", "gw", v1alpha1.ClientSettingsPolicySpec{
		Body:      &v1alpha1.ClientBody{MaxSize: ptr.To(v1alpha1.ByteSize("10m"))},
		KeepAlive: &v1alpha1.ClientKeepAlive{Timeout: &v1alpha1.ClientKeepAliveTimeout{Server: ptr.To(v1alpha1.Duration("30s")), Header: ptr.To(v1alpha1.Duration("25s"))}},
	})
	routePolicy := csp(ns, "route-uploads", "HTTPRoute", "r", v1alpha1.ClientSettingsPolicySpec{
		Body:      &v1alpha1.ClientBody{MaxSize: ptr.To(v1alpha1.ByteSize("512m"))},
		KeepAlive: &v1alpha1.ClientKeepAlive{MinTimeout: ptr.To(v1alpha1.Duration("5s"))},
	})
	create(t, gwPolicy)
	time.Sleep(1100 * time.Millisecond) // creation times have a resolution of one second: the later policy is younger
	create(t, routePolicy)
	httpInclude := config.IncludesDir + "client-settings.conf"
	routeInclude := config.RouteIncludePath("client-settings", graph.ObjectRef{Kind: "HTTPRoute", Key: routeKey})

	t.Run("rendered at both levels, affected, statuses per policy", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			got, msg, err := policyAncestorConditions(&v1alpha1.ClientSettingsPolicy{}, client.ObjectKeyFromObject(gwPolicy), "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=True/Accepted Programmed=False/Pending" {
				return fmt.Errorf("Gateway policy: %s (%s)", got, msg)
			}
			got, msg, err = policyAncestorConditions(&v1alpha1.ClientSettingsPolicy{}, client.ObjectKeyFromObject(routePolicy), "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=True/Accepted Programmed=False/PartiallyInvalid" || !strings.Contains(msg, policy.MinTimeoutIgnored) {
				return fmt.Errorf("route policy: %s (%s)", got, msg)
			}
			if f := heldFile(gwKey, httpInclude); !strings.Contains(f, "client_max_body_size 10m;") || !strings.Contains(f, "keepalive_timeout 30s 25s;") {
				return fmt.Errorf("the http include is %q", f)
			}
			if f := heldFile(gwKey, routeInclude); !strings.Contains(f, "client_max_body_size 512m;") || strings.Contains(f, "keepalive") {
				return fmt.Errorf("the route's include is %q", f)
			}
			gw, err := getGateway(gwKey)
			if err != nil {
				return err
			}
			if c := condition(gw.Status.Conditions, v1alpha1.ClientSettingsPolicyAffected); c != "True/PolicyAffected" {
				return fmt.Errorf("Gateway Affected is %s", c)
			}
			return nil
		})
	})

	t.Run("a newer policy setting the same field is Conflicted, naming the older", func(t *testing.T) {
		late := csp(ns, "gateway-late", "Gateway", "gw", v1alpha1.ClientSettingsPolicySpec{Body: &v1alpha1.ClientBody{MaxSize: ptr.To(v1alpha1.ByteSize("1m"))}})
		create(t, late)
		eventually(t, 15*time.Second, func() error {
			got, msg, err := policyAncestorConditions(&v1alpha1.ClientSettingsPolicy{}, client.ObjectKeyFromObject(late), "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=False/Conflicted Programmed=False/Invalid" || !strings.Contains(msg, ns+"/gateway-bodies") {
				return fmt.Errorf("%s (%s)", got, msg)
			}
			if f := heldFile(gwKey, httpInclude); !strings.Contains(f, "client_max_body_size 10m;") {
				return fmt.Errorf("the conflict changed the http include: %q", f)
			}
			return nil
		})
	})

	t.Run("Affected conditions go with the last policy", func(t *testing.T) {
		for _, name := range []string{"gateway-bodies", "route-uploads", "gateway-late"} {
			if err := env.Client.Delete(ctx, &v1alpha1.ClientSettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 15*time.Second, func() error {
			gw, err := getGateway(gwKey)
			if err != nil {
				return err
			}
			if c := condition(gw.Status.Conditions, v1alpha1.ClientSettingsPolicyAffected); c != "<none>" {
				return fmt.Errorf("Gateway Affected is still %s", c)
			}
			if f := heldFile(gwKey, httpInclude); f != "" {
				return fmt.Errorf("the http include is still %q", f)
			}
			return nil
		})
	})
}
