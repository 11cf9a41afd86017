package translate_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/translate"
	"github.com/gatewall/gatewall/internal/validation"
	"github.com/gatewall/gatewall/test/nginxtest"
)

// withH2CRoute adds HTTPRoute h2, whose only backend speaks h2c: NGINX
// passes to it with grpc_pass, like a GRPCRoute.
func withH2CRoute(in *graph.Input) {
	in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "h2"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "grpc", Port: 80, AppProtocol: ptr.To("kubernetes.io/h2c")}}}})
	in.Add(&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "h2", Labels: map[string]string{discoveryv1.LabelServiceName: "h2"}},
		Ports:      []discoveryv1.EndpointPort{{Name: ptr.To("grpc"), Port: ptr.To(int32(8080)), AppProtocol: ptr.To("kubernetes.io/h2c")}},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.2"}}},
	})
	in.Add(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "h2"}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
		Hostnames:       []gatewayv1.Hostname{"h2.example.com"},
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: "h2", Port: ptr.To(gatewayv1.PortNumber(80))}}}}}},
	}})
}

// TestProxySettingsStatusMatchesRenderedConfig: random policies, each
// targeting several of a Gateway's objects, never get a status that
// contradicts what is rendered:
//   - refused (Accepted=False, not for a spec error or a conflict): nothing
//     of it is rendered on any of its targets;
//   - accepted with no PartiallyInvalid: every target renders its settings,
//     and no field of it is ignored (grpc_pass locations take bufferSize only);
//   - accepted with PartiallyInvalid: each target that renders nothing of it
//     is named in the message (when it has several targets).
//
// A sample of the rendered configurations also passes real `nginx -t`.
func TestProxySettingsStatusMatchesRenderedConfig(t *testing.T) {
	if err := nginxtest.Available(); err != nil {
		t.Fatal(err)
	}
	gwKey := types.NamespacedName{Namespace: "default", Name: "gw"}
	ref := func(kind, name string) graph.ObjectRef {
		return graph.ObjectRef{Kind: kind, Key: types.NamespacedName{Namespace: "default", Name: name}}
	}
	objects := []graph.ObjectRef{ref("Gateway", "gw"), ref("HTTPRoute", "r1"), ref("HTTPRoute", "r2"), ref("GRPCRoute", "g1"), ref("HTTPRoute", "h2")}
	grpcPass := map[graph.ObjectRef]bool{ref("GRPCRoute", "g1"): true, ref("HTTPRoute", "h2"): true}
	r := rand.New(rand.NewSource(5))
	checked := map[string]int{}
	for run := 0; run < 400; run++ {
		in := baseInput()
		withH2CRoute(in)
		var ps []*v1alpha1.ProxySettingsPolicy
		for j := 0; j < 4; j++ {
			p := randomPolicy(r, fmt.Sprintf("p%d", j), "Gateway", "gw", j)
			p.Spec.TargetRefs = nil
			for _, k := range r.Perm(len(objects))[:1+r.Intn(3)] {
				p.Spec.TargetRefs = append(p.Spec.TargetRefs, gatewayv1.LocalPolicyTargetReference{
					Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(objects[k].Kind), Name: gatewayv1.ObjectName(objects[k].Key.Name)})
			}
			in.Add(p)
			ps = append(ps, p)
		}
		tr := translate.Gateway(in, gwKey)
		if run%40 == 0 { // a sample: whatever is refused, NGINX accepts what is rendered
			if out, err := nginxtest.Test(tr.Files); err != nil {
				t.Fatalf("run %d: %v\n%s", run, err, out)
			}
		}
		psp := tr.Policies["ProxySettingsPolicy"].(*policy.Result)
		rendered := func(t graph.ObjectRef) bool {
			if t.Kind == "Gateway" {
				return psp.Affected[t] // the Gateway's policies render at http level
			}
			return len(psp.Routes[t]) > 0
		}
		for _, p := range ps {
			o := psp.Outcomes[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
			b := p.Spec.Buffering
			if o == nil || len(validation.ProxySettingsPolicy(p)) > 0 || (b.Disable == nil && b.BufferSize == nil && b.Buffers == nil && b.BusyBuffersSize == nil) {
				continue
			}
			targets := policy.TargetsOf(p, p.Spec.TargetRefs)
			fail := func(format string, args ...any) {
				spec, _ := json.Marshal(b)
				t.Errorf("run %d, policy %s (targets %v, %s): Accepted=%s %q, Partial %q: %s", run, p.Name, targets, spec,
					o.Accepted.Status, o.Accepted.Message, o.Partial, fmt.Sprintf(format, args...))
			}
			switch {
			case o.Accepted.Reason == string(gatewayv1.PolicyReasonConflicted):
			case o.Accepted.Status != metav1.ConditionTrue:
				checked["refused"]++
				for _, tg := range targets {
					if rendered(tg) {
						fail("refused, yet %s renders proxy settings %v", tg, psp.Routes[tg])
					}
				}
			case o.Partial == "":
				checked["accepted"]++
				for _, tg := range targets {
					if !rendered(tg) {
						fail("fully accepted, yet %s renders nothing", tg)
					}
					if grpcPass[tg] && (b.Disable != nil || b.Buffers != nil || b.BusyBuffersSize != nil) {
						fail("fully accepted, yet %s is proxied with grpc_pass, which ignores every field but bufferSize", tg)
					}
				}
			default:
				checked["partial"]++
				for _, tg := range targets {
					if len(targets) > 1 && !rendered(tg) && !strings.Contains(o.Partial, tg.String()) {
						fail("%s renders nothing and the message does not name it", tg)
					}
				}
			}
		}
	}
	t.Logf("outcomes checked: %v", checked)
	for _, k := range []string{"refused", "accepted", "partial"} {
		if checked[k] == 0 {
			t.Errorf("no %s outcome was generated: the test proves nothing about it", k)
		}
	}
}
