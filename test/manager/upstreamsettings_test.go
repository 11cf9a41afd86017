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
	"github.com/gatewall/gatewall/internal/nginx/config"
)

func usp(ns, name string, services []string, spec v1alpha1.UpstreamSettingsPolicySpec) *v1alpha1.UpstreamSettingsPolicy {
	for _, s := range services {
		spec.TargetRefs = append(spec.TargetRefs, gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: gatewayv1.ObjectName(s)})
	}
	return &v1alpha1.UpstreamSettingsPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// upstreamBlock is the upstream block of a Service's port 80 in the
// configuration held for a Gateway, or "".
func upstreamBlock(gw types.NamespacedName, ns, svc string) string {
	conf := heldFile(gw, config.UpstreamsConfPath)
	start := strings.Index(conf, "upstream "+config.UpstreamName(types.NamespacedName{Namespace: ns, Name: svc}, 80)+" {")
	if start < 0 {
		return ""
	}
	// The block ends at the first line that closes it (the balancer's Lua
	// block closes on its own line).
	end := strings.Index(conf[start:], "\n}")
	return conf[start : start+end]
}

// TestUpstreamSettingsPolicyStatuses: an UpstreamSettingsPolicy on a
// Service a route proxies to is rendered in that Service's upstream, with
// the route's Gateway as its ancestor; a newer policy setting the same field
// is Conflicted by name; a policy on a Service no route uses has no
// ancestor until a route uses it; a missing Service is TargetNotFound until
// it is created.
func TestUpstreamSettingsPolicyStatuses(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.4.9"), service(ns, "spare"), endpointSlice(ns, "spare", "10.1.4.10"),
		gateway(ns, "gw"), httpRoute(ns, "r", "gw", "app"))
	gwKey := types.NamespacedName{Namespace: ns, Name: "gw"}
	older := usp(ns, "app-tuning", []string{"app"}, v1alpha1.UpstreamSettingsPolicySpec{
		ZoneSize:            ptr.To(v1alpha1.ByteSize("64k")),
		LoadBalancingMethod: ptr.To(v1alpha1.LoadBalancingType("least_conn")),
		KeepAlive:           &v1alpha1.UpstreamKeepAlive{Connections: ptr.To(int32(32)), Timeout: ptr.To(v1alpha1.Duration("30s"))},
	})
	create(t, older)
	time.Sleep(1100 * time.Millisecond) // creation times have a resolution of one second
	newer := usp(ns, "app-conflict", []string{"app"}, v1alpha1.UpstreamSettingsPolicySpec{
		KeepAlive: &v1alpha1.UpstreamKeepAlive{Connections: ptr.To(int32(2))},
	})
	spare := usp(ns, "spare-and-missing", []string{"spare", "missing"}, v1alpha1.UpstreamSettingsPolicySpec{
		LoadBalancingMethod: ptr.To(v1alpha1.LoadBalancingType("ip_hash")),
	})
	create(t, newer, spare)

	t.Run("rendered in the Service's upstream, the older policy wins a field", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			got, msg, err := policyAncestorConditions(&v1alpha1.UpstreamSettingsPolicy{}, client.ObjectKeyFromObject(older), "gw")
			if err != nil {
				return err
			}
			if got != "Accepted=True/Accepted Programmed=False/Pending" {
				return fmt.Errorf("older policy: %s (%s)", got, msg)
			}
			got, msg, err = policyAncestorConditions(&v1alpha1.UpstreamSettingsPolicy{}, client.ObjectKeyFromObject(newer), "gw")
			if err != nil {
				return err
			}
			want := "UpstreamSettingsPolicy " + ns + "/app-tuning, which is older, already sets keepAlive.connections on Service " + ns + "/app"
			if got != "Accepted=False/Conflicted Programmed=False/Invalid" || !strings.Contains(msg, want) {
				return fmt.Errorf("newer policy: %s (%s)", got, msg)
			}
			up := upstreamBlock(gwKey, ns, "app")
			name := config.UpstreamName(types.NamespacedName{Namespace: ns, Name: "app"}, 80)
			balance := `balance("` + config.UpstreamID(types.NamespacedName{Namespace: ns, Name: "app"}, 80) + `", "least_conn")`
			for _, line := range []string{"zone " + name + " 64k;", balance, "keepalive 32;", "keepalive_timeout 30s;"} {
				if !strings.Contains(up, line) {
					return fmt.Errorf("upstream lacks %q: %q", line, up)
				}
			}
			return nil
		})
	})

	t.Run("no ancestor until a route uses the Service; TargetNotFound until it exists", func(t *testing.T) {
		ancestors := func() (string, error) {
			p := &v1alpha1.UpstreamSettingsPolicy{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(spare), p); err != nil {
				return "", err
			}
			var out []string
			for _, a := range p.Status.Ancestors {
				out = append(out, fmt.Sprintf("%s/%s=%s", ptr.Deref(a.AncestorRef.Kind, ""), a.AncestorRef.Name, condition(a.Conditions, "Accepted")))
			}
			return strings.Join(out, " "), nil
		}
		eventually(t, 15*time.Second, func() error {
			got, err := ancestors()
			if err != nil || got != "Service/missing=False/TargetNotFound" {
				return fmt.Errorf("ancestors %q, %v; want only the missing Service's TargetNotFound", got, err)
			}
			return nil
		})
		create(t, httpRoute(ns, "uses-spare", "gw", "spare"), service(ns, "missing"))
		eventually(t, 15*time.Second, func() error {
			got, err := ancestors()
			if err != nil || got != "Gateway/gw=True/Accepted" {
				return fmt.Errorf("ancestors %q, %v; want the Gateway, accepted, and no TargetNotFound", got, err)
			}
			if up := upstreamBlock(gwKey, ns, "spare"); !strings.Contains(up, `"ip_hash")`) {
				return fmt.Errorf("spare's upstream is %q", up)
			}
			return nil
		})
	})
}
