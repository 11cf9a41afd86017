package graph

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// overlayInput is a class whose NginxProxy is gatewall-system/class-np and a
// Gateway default/gw whose NginxProxy is default/gw-np; a nil spec leaves
// that parametersRef out.
func overlayInput(class, gateway *v1alpha2.NginxProxySpec) *Input {
	const controller = "example.com/gatewall"
	in := NewInput(controller)
	gc := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: controller},
	}
	if class != nil {
		gc.Spec.ParametersRef = &gatewayv1.ParametersReference{
			Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy",
			Name: "class-np", Namespace: ptr.To(gatewayv1.Namespace("gatewall-system")),
		}
		in.Add(&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "gatewall-system", Name: "class-np"}, Spec: *class})
	}
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw"},
		Spec: gatewayv1.GatewaySpec{
			GatewayClassName: "nginx",
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}},
		},
	}
	if gateway != nil {
		gw.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{
			Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "gw-np",
		}}
		in.Add(&v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gw-np"}, Spec: *gateway})
	}
	in.Add(gc)
	in.Add(gw)
	return in
}

func npWithService(svc v1alpha2.ServiceSpec) *v1alpha2.NginxProxySpec {
	return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Service: &svc}}
}

// TestEffectiveNginxProxyRevalidated: two NginxProxies that are valid alone
// can overlay into settings that are not; the Gateway is then refused
// (Accepted=False, InvalidParameters), naming the rule and both NginxProxies.
func TestEffectiveNginxProxyRevalidated(t *testing.T) {
	lb, clusterIP, nodePort := corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort
	local := corev1.ServiceExternalTrafficPolicyLocal
	ipv4 := v1alpha2.IPFamilyIPv4
	for _, tc := range []struct {
		name           string
		class, gateway *v1alpha2.NginxProxySpec
		want           string // the rule's message; "" when accepted
	}{
		{
			name:    "class source ranges, Gateway ClusterIP",
			class:   npWithService(v1alpha2.ServiceSpec{Type: &lb, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}),
			gateway: npWithService(v1alpha2.ServiceSpec{Type: &clusterIP}),
			want:    validation.MsgLBRangesType,
		},
		{
			name:    "class Local traffic policy, Gateway ClusterIP",
			class:   npWithService(v1alpha2.ServiceSpec{Type: &nodePort, ExternalTrafficPolicy: &local}),
			gateway: npWithService(v1alpha2.ServiceSpec{Type: &clusterIP}),
			want:    validation.MsgTrafficPolicyType,
		},
		{
			name:    "class IPv6 loadBalancerIP, Gateway ipv4",
			class:   npWithService(v1alpha2.ServiceSpec{LoadBalancerIP: ptr.To("2001:db8::1")}),
			gateway: &v1alpha2.NginxProxySpec{IPFamily: &ipv4},
			want:    validation.MsgLBIPNotIPv4,
		},
		{
			name:    "class loadBalancerIP, Gateway NodePort",
			class:   npWithService(v1alpha2.ServiceSpec{LoadBalancerIP: ptr.To("203.0.113.7")}),
			gateway: npWithService(v1alpha2.ServiceSpec{Type: &nodePort}),
			want:    validation.MsgLBIPType,
		},
		{
			name:    "compatible overlay",
			class:   npWithService(v1alpha2.ServiceSpec{Type: &lb, LoadBalancerIP: ptr.To("203.0.113.7")}),
			gateway: &v1alpha2.NginxProxySpec{IPFamily: &ipv4, WorkerConnections: ptr.To(int32(2048))},
		},
		{
			name:    "the Gateway's type and ranges replace the class's",
			class:   npWithService(v1alpha2.ServiceSpec{Type: &clusterIP}),
			gateway: npWithService(v1alpha2.ServiceSpec{Type: &lb, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}),
		},
		{
			name:    "class only",
			class:   npWithService(v1alpha2.ServiceSpec{Type: &lb, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}),
			gateway: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Build(overlayInput(tc.class, tc.gateway), key("default", "gw"))
			accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
			if accepted == nil {
				t.Fatalf("no Accepted condition in %+v", g.Conditions)
			}
			if tc.want == "" {
				if accepted.Status != metav1.ConditionTrue || !g.Valid {
					t.Fatalf("Gateway refused: %s: %s", accepted.Reason, accepted.Message)
				}
				return
			}
			if accepted.Status != metav1.ConditionFalse || g.Valid {
				t.Fatalf("Gateway accepted; want it refused with %q", tc.want)
			}
			if accepted.Reason != string(gatewayv1.GatewayReasonInvalidParameters) {
				t.Errorf("reason %s, want InvalidParameters", accepted.Reason)
			}
			for _, want := range []string{tc.want, "NginxProxy default/gw-np", "NginxProxy gatewall-system/class-np"} {
				if !strings.Contains(accepted.Message, want) {
					t.Errorf("message %q does not contain %q", accepted.Message, want)
				}
			}
		})
	}
}

// TestEffectiveNginxProxyLeavesInputs: the overlay is a new spec.
func TestEffectiveNginxProxyLeavesInputs(t *testing.T) {
	lb, clusterIP := corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP
	class := npWithService(v1alpha2.ServiceSpec{Type: &lb, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}})
	gateway := npWithService(v1alpha2.ServiceSpec{Type: &clusterIP})
	eff := EffectiveNginxProxy(class, gateway)
	if got := *eff.Kubernetes.Service.Type; got != clusterIP {
		t.Errorf("effective type %s, want ClusterIP", got)
	}
	if got := *class.Kubernetes.Service.Type; got != lb {
		t.Errorf("the class's spec was modified: type %s", got)
	}
}
