package translate_test

import (
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/test/nginxtest"
)

var sizes = []string{"1k", "4k", "8k", "12k", "14k", "16k", "32k", "64k", "1m", "1024m", "1025m"}

func randomPolicy(r *rand.Rand, name, kind, target string, created int) *v1alpha1.ProxySettingsPolicy {
	b := &v1alpha1.ProxyBuffering{}
	pick := func() *v1alpha1.Size { s := v1alpha1.Size(sizes[r.Intn(len(sizes))]); return &s }
	if r.Intn(3) == 0 {
		b.Disable = ptr.To(r.Intn(2) == 0)
	}
	if r.Intn(2) == 0 {
		b.BufferSize = pick()
	}
	if r.Intn(2) == 0 {
		b.Buffers = &v1alpha1.ProxyBuffers{Number: []int32{2, 4, 8, 16}[r.Intn(4)], Size: *pick()}
	}
	if r.Intn(2) == 0 {
		b.BusyBuffersSize = pick()
	}
	return &v1alpha1.ProxySettingsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.Unix(int64(created), 0)},
		Spec: v1alpha1.ProxySettingsPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReference{{Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(target)}},
			Buffering:  b,
		},
	}
}

func baseInput() *graph.Input {
	in := graph.NewInput(graph.DefaultControllerName)
	in.Add(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: graph.DefaultControllerName}})
	in.Add(&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: "nginx", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}})
	backend := []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "app", Port: ptr.To(gatewayv1.PortNumber(80))}}}
	for _, name := range []string{"r1", "r2"} {
		in.Add(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(name + ".example.com")},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: ptr.To("/a")}}, {Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x-v", Value: "1"}}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backend[0]}},
			}},
		}})
	}
	in.Add(&gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "g1"}, Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
		Hostnames:       []gatewayv1.Hostname{"grpc.example.com"},
		Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backend[0]}}}},
	}})
	in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}})
	in.Add(&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app", Labels: map[string]string{discoveryv1.LabelServiceName: "app"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080))}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
	})
	return in
}

// TestRandomPoliciesRenderValidNginx feeds random ProxySettingsPolicies on a
// Gateway, two HTTPRoutes and a GRPCRoute through the whole pipeline: the
// rendered configuration always passes real `nginx -t`, whatever was refused.
func TestRandomPoliciesRenderValidNginx(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	gw := types.NamespacedName{Namespace: "default", Name: "gw"}
	refused := 0
	const runs = 60
	for i := 0; i < runs; i++ {
		in := baseInput()
		for j, tgt := range [][2]string{{"Gateway", "gw"}, {"HTTPRoute", "r1"}, {"HTTPRoute", "r2"}, {"GRPCRoute", "g1"}, {"HTTPRoute", "r1"}} {
			if r.Intn(4) != 0 {
				in.Add(randomPolicy(r, fmt.Sprintf("p%d", j), tgt[0], tgt[1], j))
			}
		}
		tr := translate.Gateway(in, gw)
		for _, o := range tr.Policies["ProxySettingsPolicy"].PolicyOutcomes() {
			if o.Accepted.Status != metav1.ConditionTrue {
				refused++
			}
		}
		if out, err := nginxtest.Test(tr.Files); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
	}
	t.Logf("%d random policy sets rendered configurations nginx -t accepts (%d policies refused or conflicted)", runs, refused)
}

// A Gateway's graph names the Services whose EndpointSlices it read.
func TestGraphServices(t *testing.T) {
	key := types.NamespacedName{Namespace: "default", Name: "gw"}
	tr := translate.Gateway(baseInput(), key)
	want := []types.NamespacedName{{Namespace: "default", Name: "app"}}
	if got := tr.Graph.Services(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Services() = %v, want %v", got, want)
	}
}
