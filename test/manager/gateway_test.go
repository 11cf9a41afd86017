package manager_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/datafile"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/nginx/config"
)

const className = "gatewall-test"

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func gatewayClass() *gatewayv1.GatewayClass {
	return &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: manager.DefaultControllerName},
	}
}

func gateway(ns, name string) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: className,
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
}

func httpRoute(ns, name, gw, svc string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gw)}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(name + ".example.com")},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(80))},
			}}}}},
		},
	}
}

func service(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
}

func endpointSlice(ns, svc string, ips ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-slice", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
	}
	return s
}

func namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

func condition(conds []metav1.Condition, t string) string {
	c := meta.FindStatusCondition(conds, t)
	if c == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s/%s", c.Status, c.Reason)
}

func getGateway(key types.NamespacedName) (*gatewayv1.Gateway, error) {
	gw := &gatewayv1.Gateway{}
	return gw, env.Client.Get(context.Background(), key, gw)
}

// routeParentsFor returns the route's parent statuses Gatewall wrote for a Gateway.
func routeParentsFor(key types.NamespacedName, gwName string) ([]gatewayv1.RouteParentStatus, error) {
	r := &gatewayv1.HTTPRoute{}
	if err := env.Client.Get(context.Background(), key, r); err != nil {
		return nil, err
	}
	var out []gatewayv1.RouteParentStatus
	for _, p := range r.Status.Parents {
		if string(p.ParentRef.Name) == gwName && string(p.ControllerName) == manager.DefaultControllerName {
			out = append(out, p)
		}
	}
	return out, nil
}

// heldEndpoints are the endpoints of the Gateway's upstream of a Service
// port, as its data plane would receive them.
func heldEndpoints(gw, svc types.NamespacedName, port int32) []string {
	return held.Endpoints(gw)[config.UpstreamID(svc, port)].Endpoints
}

func heldFile(gw types.NamespacedName, path string) string {
	for _, f := range held.Files(gw) {
		if f.Path == path {
			return string(f.Data)
		}
	}
	return ""
}

// TestGatewayStatuses creates a GatewayClass, a Gateway, an HTTPRoute and a
// Service, and checks the statuses the Gateway API requires, then moves the
// route to another Gateway and deletes a Gateway.
func TestGatewayStatuses(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	if err := env.Client.Create(ctx, gatewayClass()); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	create(t, service(ns, "app"), endpointSlice(ns, "app", "10.1.2.3"), gateway(ns, "gw1"), gateway(ns, "gw2"), httpRoute(ns, "app", "gw1", "app"))
	gw1, gw2 := types.NamespacedName{Namespace: ns, Name: "gw1"}, types.NamespacedName{Namespace: ns, Name: "gw2"}
	routeKey := types.NamespacedName{Namespace: ns, Name: "app"}

	t.Run("GatewayClass is accepted with its supported features", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			gc := &gatewayv1.GatewayClass{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: className}, gc); err != nil {
				return err
			}
			if got := condition(gc.Status.Conditions, "Accepted"); got != "True/Accepted" {
				return fmt.Errorf("Accepted is %s", got)
			}
			if len(gc.Status.SupportedFeatures) == 0 {
				return fmt.Errorf("no supportedFeatures")
			}
			return nil
		})
	})

	t.Run("Gateway and route statuses; files ready to push", func(t *testing.T) {
		eventually(t, 15*time.Second, func() error {
			gw, err := getGateway(gw1)
			if err != nil {
				return err
			}
			if got := condition(gw.Status.Conditions, "Accepted"); got != "True/Accepted" {
				return fmt.Errorf("Gateway Accepted is %s", got)
			}
			// No data plane applies the configuration: Programmed must say so.
			if got := condition(gw.Status.Conditions, "Programmed"); got != "False/Pending" {
				return fmt.Errorf("Gateway Programmed is %s", got)
			}
			if len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 1 {
				return fmt.Errorf("listeners: %+v", gw.Status.Listeners)
			}
			parents, err := routeParentsFor(routeKey, "gw1")
			if err != nil {
				return err
			}
			if len(parents) != 1 || condition(parents[0].Conditions, "Accepted") != "True/Accepted" ||
				condition(parents[0].Conditions, "ResolvedRefs") != "True/ResolvedRefs" {
				return fmt.Errorf("route parents: %+v", parents)
			}
			if eps := heldEndpoints(gw1, types.NamespacedName{Namespace: ns, Name: "app"}, 80); !slices.Equal(eps, []string{"10.1.2.3:8080"}) {
				return fmt.Errorf("the upstream's endpoints are %v, want 10.1.2.3:8080", eps)
			}
			return nil
		})
	})

	t.Run("endpoint changes reach the data plane, not the files", func(t *testing.T) {
		files := datafile.Version(held.Files(gw1))
		refreshes, wakes := endpointRefreshes(gw1), endpointWakes(gw1)
		setSliceEndpoints(t, ns, "app-slice", "10.1.2.3", "10.1.2.4")
		eventually(t, 15*time.Second, func() error {
			if eps := heldEndpoints(gw1, types.NamespacedName{Namespace: ns, Name: "app"}, 80); !slices.Equal(eps, []string{"10.1.2.3:8080", "10.1.2.4:8080"}) {
				return fmt.Errorf("the upstream's endpoints are %v, want the new one too", eps)
			}
			return nil
		})
		if now := datafile.Version(held.Files(gw1)); now != files {
			t.Errorf("an endpoint change changed the files (%s, then %s): NGINX would reload", files, now)
		}
		// A change of endpoints alone is not translated: the last
		// translation is kept, with the new endpoints.
		if got := endpointRefreshes(gw1); got <= refreshes {
			t.Errorf("gatewall_endpoint_refreshes_total stayed at %v: the endpoint change was not refreshed apart", got)
		}
		// Nothing else changed: the Gateway was queued by the slice alone
		// and read nothing but its Service's slices.
		if got := endpointWakes(gw1); got <= wakes {
			t.Errorf("gatewall_endpoint_wakes_total stayed at %v: the Gateway read a whole snapshot for a slice's change", got)
		}
	})

	t.Run("an endpoint change that changes the route's status is translated", func(t *testing.T) {
		// A multicast address (which the API server lets through) is
		// refused and named in ResolvedRefs: the shortcut cannot say it,
		// the translation does; and takes it back.
		translations := translationsOf(gw1)
		setSliceEndpoints(t, ns, "app-slice", "10.1.2.3", "239.1.2.3")
		resolved := func(want string) {
			eventually(t, 15*time.Second, func() error {
				parents, err := routeParentsFor(routeKey, "gw1")
				if err != nil {
					return err
				}
				if len(parents) != 1 || condition(parents[0].Conditions, "ResolvedRefs") != want {
					return fmt.Errorf("route parents: %+v, want ResolvedRefs %s", parents, want)
				}
				return nil
			})
		}
		resolved("False/UnusableEndpoints")
		if eps := heldEndpoints(gw1, types.NamespacedName{Namespace: ns, Name: "app"}, 80); !slices.Equal(eps, []string{"10.1.2.3:8080"}) {
			t.Errorf("the upstream's endpoints are %v, want 10.1.2.3:8080 alone", eps)
		}
		setSliceEndpoints(t, ns, "app-slice", "10.1.2.3", "10.1.2.4")
		resolved("True/ResolvedRefs")
		if got := translationsOf(gw1); got < translations+2 {
			t.Errorf("%d translations for two changes of the route's status", got-translations)
		}
	})

	t.Run("route moves to another Gateway", func(t *testing.T) {
		route := &gatewayv1.HTTPRoute{}
		if err := env.Client.Get(ctx, routeKey, route); err != nil {
			t.Fatal(err)
		}
		route.Spec.ParentRefs[0].Name = "gw2"
		if err := env.Client.Update(ctx, route); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, func() error {
			old, err := routeParentsFor(routeKey, "gw1")
			if err != nil {
				return err
			}
			if len(old) != 0 {
				return fmt.Errorf("gw1's parent status is still there: %+v", old)
			}
			parents, err := routeParentsFor(routeKey, "gw2")
			if err != nil {
				return err
			}
			if len(parents) != 1 || condition(parents[0].Conditions, "Accepted") != "True/Accepted" {
				return fmt.Errorf("gw2 parents: %+v", parents)
			}
			g1, err := getGateway(gw1)
			if err != nil {
				return err
			}
			if g1.Status.Listeners[0].AttachedRoutes != 0 {
				return fmt.Errorf("gw1 still counts %d attached routes", g1.Status.Listeners[0].AttachedRoutes)
			}
			if strings.Contains(heldFile(gw1, config.ServersConfPath), "app.example.com") {
				return fmt.Errorf("gw1's configuration still serves the route")
			}
			if !strings.Contains(heldFile(gw2, config.ServersConfPath), "app.example.com") {
				return fmt.Errorf("gw2's configuration does not serve the route")
			}
			return nil
		})
	})

	t.Run("Gateway deleted", func(t *testing.T) {
		if err := env.Client.Delete(ctx, gateway(ns, "gw2")); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, func() error {
			parents, err := routeParentsFor(routeKey, "gw2")
			if err != nil {
				return err
			}
			if len(parents) != 0 {
				return fmt.Errorf("the deleted Gateway's parent status is still there: %+v", parents)
			}
			if files := held.Files(gw2); files != nil {
				return fmt.Errorf("the deleted Gateway's configuration is still held (%d files)", len(files))
			}
			return nil
		})
	})
}

// setSliceEndpoints sets the endpoints of an EndpointSlice.
func setSliceEndpoints(t *testing.T, ns, name string, ips ...string) {
	t.Helper()
	slice := &discoveryv1.EndpointSlice{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, slice); err != nil {
		t.Fatal(err)
	}
	slice.Endpoints = nil
	for _, ip := range ips {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}})
	}
	if err := env.Client.Update(context.Background(), slice); err != nil {
		t.Fatal(err)
	}
}

// endpointWakes is gatewall_endpoint_wakes_total of a Gateway.
func endpointWakes(gw types.NamespacedName) float64 {
	return testutil.ToFloat64(metrics.EndpointWakes.With(metrics.Gateway(gw)))
}

// endpointRefreshes is gatewall_endpoint_refreshes_total of a Gateway.
func endpointRefreshes(gw types.NamespacedName) float64 {
	return testutil.ToFloat64(metrics.EndpointRefreshes.With(metrics.Gateway(gw)))
}

// translationsOf counts a Gateway's translations
// (gatewall_translation_duration_seconds' observations).
func translationsOf(gw types.NamespacedName) uint64 {
	m := &dto.Metric{}
	h, ok := metrics.TranslationSeconds.With(metrics.Gateway(gw)).(prometheus.Metric)
	if !ok || h.Write(m) != nil {
		return 0
	}
	return m.GetHistogram().GetSampleCount()
}
