package render_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/render"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// scaleInput builds gateways Gateways, each with listeners HTTP listeners on
// port 80 (hostnames *.zone<N>.example.com) and routes HTTPRoutes, each with
// its own hostname and its own Service with two endpoints.
func scaleInput(gateways, listeners, routes int) *graph.Input {
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	for g := 0; g < gateways; g++ {
		ns := fmt.Sprintf("ns%d", g)
		gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx"}}
		for l := 0; l < listeners; l++ {
			h := gatewayv1.Hostname(fmt.Sprintf("*.zone%d.example.com", l))
			gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", l)), Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: &h})
		}
		in.Add(gw)
		for r := 0; r < routes; r++ {
			name := fmt.Sprintf("r%d", r)
			in.Add(&gatewayv1.HTTPRoute{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: gatewayv1.HTTPRouteSpec{
					CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
					Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("%s.zone%d.example.com", name, r%listeners))},
					Rules: []gatewayv1.HTTPRouteRule{{
						Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To("/api")}}},
						BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(80))}}}},
					}},
				},
			})
			in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
			in.Add(&discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080))}},
				Endpoints: []discoveryv1.Endpoint{
					{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", g%200, r/250, r%250)}},
					{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 200+g%50, r/250, r%250)}},
				},
			})
		}
	}
	return in
}

var benchNow = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

// BenchmarkRender5000Routes builds the graph and renders the configuration
// and statuses of one Gateway with 64 listeners and 5,000 HTTPRoutes (5,000
// hostnames, 5,000 Services), then times real `nginx -t` on that output once
// and reports both and their ratio.
func BenchmarkRender5000Routes(b *testing.B) {
	in := scaleInput(1, 64, 5000)
	b.ReportAllocs()
	b.ResetTimer()
	var res render.Result
	for i := 0; i < b.N; i++ {
		res = render.Render(in, benchNow)
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Milliseconds()) / float64(b.N)
	reportNginxT(b, res, perOp)
}

// BenchmarkRender100Gateways50Routes renders 100 Gateways of 50 routes each.
func BenchmarkRender100Gateways50Routes(b *testing.B) {
	in := scaleInput(100, 1, 50)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		render.Render(in, benchNow)
	}
}

// BenchmarkBuildOneGatewayOf100 is one reconcile's share: one Gateway's graph
// and configuration when 100 Gateways of 50 routes share the snapshot.
func BenchmarkBuildOneGatewayOf100(b *testing.B) {
	in := scaleInput(100, 1, 50)
	key := types.NamespacedName{Namespace: "ns42", Name: "gw"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		translate.Gateway(in, key)
	}
}

func reportNginxT(b *testing.B, res render.Result, renderMs float64) {
	b.Helper()
	if err := nginxtest.Available(); err != nil {
		b.Fatal(err)
	}
	for _, files := range res.Files {
		start := time.Now()
		if out, err := nginxtest.Test(files); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		size := 0
		for _, f := range files {
			size += len(f.Data)
		}
		b.ReportMetric(ms, "nginx-t-ms")
		b.ReportMetric(renderMs/ms, "render/nginx-t")
		b.ReportMetric(float64(size)/1024, "config-KiB")
	}
}

// BenchmarkEndpointChange5000Routes is what a pod that starts or stops
// costs the Gateway reconciler at 5,000 routes (64 listeners), once it has
// read the snapshot: the input's fingerprints, then the whole translation
// (before issue 41) or the last translation kept with the new endpoints
// (translate.RefreshEndpoints).
func BenchmarkEndpointChange5000Routes(b *testing.B) {
	key := types.NamespacedName{Namespace: "ns0", Name: "gw"}
	last := translate.Gateway(scaleInput(1, 64, 5000), key)
	in := scaleInput(1, 64, 5000)
	slice := in.EndpointSlices[types.NamespacedName{Namespace: "ns0", Name: "r42"}]
	slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.99.0.1"}})
	b.Run("fingerprints", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			in.Fingerprints()
		}
	})
	b.Run("translate", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			translate.Gateway(in, key)
		}
	})
	b.Run("refresh", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, ok := translate.RefreshEndpoints(in, last); !ok {
				b.Fatal("an endpoint added was not refreshed")
			}
		}
	})
	// What a Gateway queued by the slice's change alone does: after a
	// first refresh, only the changed Service's slices are read again.
	prior, ok := translate.RefreshEndpoints(scaleInput(1, 64, 5000), last)
	if !ok {
		b.Fatal("the unchanged input was not refreshed")
	}
	changed := map[types.NamespacedName]bool{{Namespace: "ns0", Name: "r42"}: true}
	b.Run("refresh-one-service", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, ok := translate.RefreshServices(in, prior, changed); !ok {
				b.Fatal("an endpoint added was not refreshed")
			}
		}
	})
}
