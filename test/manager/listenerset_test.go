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

	"github.com/gatewall/gatewall/internal/nginx/config"
)

func listenerSet(ns, name, gw string, port gatewayv1.PortNumber, hostname string) *gatewayv1.ListenerSet {
	h := gatewayv1.Hostname(hostname)
	return &gatewayv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Name: gatewayv1.ObjectName(gw)},
			Listeners: []gatewayv1.ListenerEntry{{Name: "web", Port: port, Protocol: gatewayv1.HTTPProtocolType, Hostname: &h}},
		},
	}
}

// routeToSet is an HTTPRoute whose only parent is a ListenerSet.
func routeToSet(ns, name, set, svc string) *gatewayv1.HTTPRoute {
	r := httpRoute(ns, name, set, svc)
	r.Spec.Hostnames = nil
	r.Spec.ParentRefs[0].Kind = ptr.To(gatewayv1.Kind("ListenerSet"))
	return r
}

func getListenerSet(key types.NamespacedName) (*gatewayv1.ListenerSet, error) {
	ls := &gatewayv1.ListenerSet{}
	return ls, env.Client.Get(context.Background(), key, ls)
}

// TestListenerSetStatuses: a ListenerSet is refused until its Gateway allows
// it, then attached (its listener served, its route accepted, counted on the
// Gateway); deleting it takes its listener off the data plane and its
// parent status off the route.
func TestListenerSetStatuses(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.2.3"), gateway(ns, "gw"),
		listenerSet(ns, "team", "gw", 8080, "team.example.com"), routeToSet(ns, "team-route", "team", "app"))
	gwKey, lsKey := types.NamespacedName{Namespace: ns, Name: "gw"}, types.NamespacedName{Namespace: ns, Name: "team"}
	routeKey := types.NamespacedName{Namespace: ns, Name: "team-route"}

	t.Run("not allowed by default", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			ls, err := getListenerSet(lsKey)
			if err != nil {
				return err
			}
			for _, c := range []string{"Accepted", "Programmed"} {
				if got := condition(ls.Status.Conditions, c); got != "False/NotAllowed" {
					return fmt.Errorf("ListenerSet %s is %s", c, got)
				}
			}
			parents, err := routeParentsFor(routeKey, "team")
			if err != nil {
				return err
			}
			if len(parents) != 1 || condition(parents[0].Conditions, "Accepted") != "False/NoMatchingParent" {
				return fmt.Errorf("route parents: %+v", parents)
			}
			if strings.Contains(heldFile(gwKey, config.ServersConfPath), "team.example.com") {
				return fmt.Errorf("the configuration serves a ListenerSet the Gateway does not allow")
			}
			return nil
		})
	})

	t.Run("allowed: attached, served, counted", func(t *testing.T) {
		gw, err := getGateway(gwKey)
		if err != nil {
			t.Fatal(err)
		}
		gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromSame)}}
		if err := env.Client.Update(ctx, gw); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, func() error {
			ls, err := getListenerSet(lsKey)
			if err != nil {
				return err
			}
			if got := condition(ls.Status.Conditions, "Accepted"); got != "True/Accepted" {
				return fmt.Errorf("ListenerSet Accepted is %s", got)
			}
			// No data plane runs here: Programmed must say it is pending.
			if got := condition(ls.Status.Conditions, "Programmed"); got != "False/Pending" {
				return fmt.Errorf("ListenerSet Programmed is %s", got)
			}
			if len(ls.Status.Listeners) != 1 || ls.Status.Listeners[0].AttachedRoutes != 1 {
				return fmt.Errorf("ListenerSet listeners: %+v", ls.Status.Listeners)
			}
			for _, c := range ls.Status.Conditions {
				if c.ObservedGeneration != ls.Generation {
					return fmt.Errorf("condition %s is about generation %d, not %d", c.Type, c.ObservedGeneration, ls.Generation)
				}
			}
			gw, err := getGateway(gwKey)
			if err != nil {
				return err
			}
			if n := ptr.Deref(gw.Status.AttachedListenerSets, -1); n != 1 {
				return fmt.Errorf("Gateway attachedListenerSets is %d", n)
			}
			if len(gw.Status.Listeners) != 1 {
				return fmt.Errorf("the Gateway reports a ListenerSet's listener: %+v", gw.Status.Listeners)
			}
			parents, err := routeParentsFor(routeKey, "team")
			if err != nil {
				return err
			}
			if len(parents) != 1 || condition(parents[0].Conditions, "Accepted") != "True/Accepted" {
				return fmt.Errorf("route parents: %+v", parents)
			}
			servers := heldFile(gwKey, config.ServersConfPath)
			if !strings.Contains(servers, "listen 8080") || !strings.Contains(servers, "server_name team.example.com;") {
				return fmt.Errorf("the ListenerSet's listener is not served:\n%s", servers)
			}
			return nil
		})
	})

	t.Run("deleted: off the data plane and off the route", func(t *testing.T) {
		if err := env.Client.Delete(ctx, &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, func() error {
			parents, err := routeParentsFor(routeKey, "team")
			if err != nil {
				return err
			}
			if len(parents) != 0 {
				return fmt.Errorf("the deleted ListenerSet's parent status is still there: %+v", parents)
			}
			gw, err := getGateway(gwKey)
			if err != nil {
				return err
			}
			if n := ptr.Deref(gw.Status.AttachedListenerSets, -1); n != 0 {
				return fmt.Errorf("Gateway attachedListenerSets is %d", n)
			}
			if servers := heldFile(gwKey, config.ServersConfPath); strings.Contains(servers, "team.example.com") {
				return fmt.Errorf("the deleted ListenerSet's listener is still served:\n%s", servers)
			}
			return nil
		})
	})
}
