package graph

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
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
			// The class lets its Gateways choose their Service (overrides.go).
			tc.class.AllowGatewayOverrides = &v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{v1alpha2.OverrideService}}
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

// TestListenersOnDataPlanePorts: a listener cannot take a port the data
// plane's own servers use in the pod (metrics, the WAF enforcer); it is
// refused with PortUnavailable, the Gateway's other listeners keep working,
// and the port is free again once the NginxProxy moves or disables them.
func TestListenersOnDataPlanePorts(t *testing.T) {
	off := &v1alpha2.Metrics{Disable: ptr.To(true)}
	cases := []struct {
		name string
		np   *v1alpha2.NginxProxySpec
		port gatewayv1.PortNumber
		want string // "" when the listener is accepted
	}{
		{"default metrics port", nil, 9113, "port 9113 is taken in the data-plane pod by the data plane's metrics"},
		{"metrics disabled", &v1alpha2.NginxProxySpec{Metrics: off}, 9113, ""},
		{"metrics moved", &v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(9200))}}, 9113, ""},
		{"moved metrics port", &v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(9200))}}, 9200, "port 9200 is taken"},
		{"WAF enforcer port", &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled}, 50000, "port 50000 is taken in the data-plane pod by the WAF enforcer"},
		{"enforcer port without WAF", &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFDisabled}, 50000, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := overlayInput(nil, tc.np)
			gw := in.Gateways[key("default", "gw")]
			gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener{Name: "extra", Port: tc.port, Protocol: gatewayv1.HTTPProtocolType})
			g := Build(in, key("default", "gw"))
			if !g.Valid || !g.Listeners[0].Valid {
				t.Fatalf("the Gateway and its other listener must keep working: %+v", g.Conditions)
			}
			l := g.Listeners[1]
			c := meta.FindStatusCondition(l.Conditions, string(gatewayv1.ListenerConditionAccepted))
			if tc.want == "" {
				if !l.Valid || c.Status != metav1.ConditionTrue {
					t.Errorf("listener on %d refused: %s %q", tc.port, c.Reason, c.Message)
				}
				return
			}
			if l.Valid || l.Attachable || c.Status != metav1.ConditionFalse || c.Reason != string(gatewayv1.ListenerReasonPortUnavailable) || !strings.Contains(c.Message, tc.want) {
				t.Errorf("listener on %d: valid=%v %s %s %q, want PortUnavailable %q", tc.port, l.Valid, c.Status, c.Reason, c.Message, tc.want)
			}
		})
	}
}

// TestMetricsOverlay: the Gateway's NginxProxy overrides the class's metrics
// field by field, and a port from one that the other's WAF makes the
// enforcer's is refused.
func TestMetricsOverlay(t *testing.T) {
	class := &v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(9200))}}
	if got := EffectiveNginxProxy(class, &v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Disable: ptr.To(true)}}).MetricsPort(); got != 0 {
		t.Errorf("the Gateway disabled metrics; port %d", got)
	}
	if got := EffectiveNginxProxy(class, &v1alpha2.NginxProxySpec{WorkerConnections: ptr.To(int32(64))}).MetricsPort(); got != 9200 {
		t.Errorf("the class's port is 9200; got %d", got)
	}
	if got := EffectiveNginxProxy(nil, nil).MetricsPort(); got != v1alpha2.DefaultMetricsPort {
		t.Errorf("default port %d, want %d", got, v1alpha2.DefaultMetricsPort)
	}
	in := overlayInput(&v1alpha2.NginxProxySpec{Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(v1alpha2.WAFEnforcerPort))}}, &v1alpha2.NginxProxySpec{WAF: v1alpha2.WAFEnabled})
	g := Build(in, key("default", "gw"))
	accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
	if g.Valid || accepted.Reason != string(gatewayv1.GatewayReasonInvalidParameters) || !strings.Contains(accepted.Message, validation.MsgMetricsPortWAF) {
		t.Errorf("Gateway valid=%v %s %q; want InvalidParameters %q", g.Valid, accepted.Reason, accepted.Message, validation.MsgMetricsPortWAF)
	}
}

// TestL4Overlay: the Gateway's NginxProxy overrides the class's l4
// settings field by field.
func TestL4Overlay(t *testing.T) {
	class := &v1alpha2.NginxProxySpec{L4: &v1alpha2.L4Listeners{MaxConnections: ptr.To(int32(500)), UDPSessionTimeout: ptr.To(gatewayv1.Duration("30s"))}}
	gw := &v1alpha2.NginxProxySpec{L4: &v1alpha2.L4Listeners{TCPIdleTimeout: ptr.To(gatewayv1.Duration("1h")), UDPSessionTimeout: ptr.To(gatewayv1.Duration("2s"))}}
	got := EffectiveNginxProxy(class, gw).L4
	if got == nil || *got.MaxConnections != 500 || *got.TCPIdleTimeout != "1h" || *got.UDPSessionTimeout != "2s" {
		t.Errorf("effective l4 %+v: want the class's maxConnections 500 and the Gateway's timeouts", got)
	}
	if *class.L4.UDPSessionTimeout != "30s" {
		t.Errorf("the class's spec was modified: %+v", class.L4)
	}
}

// TestEndpointsResourcesOverlay: the endpoints container's resources
// overlay like the other containers': the Gateway's, when set, replace the
// class's whole.
func TestEndpointsResourcesOverlay(t *testing.T) {
	with := func(mem string, replicas *int32) *v1alpha2.NginxProxySpec {
		d := &v1alpha2.DeploymentSpec{Replicas: replicas}
		if mem != "" {
			d.Endpoints = &v1alpha2.EndpointsContainer{Resources: &corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}}
		}
		return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: d}}
	}
	for _, c := range []struct {
		name           string
		class, gateway *v1alpha2.NginxProxySpec
		want           string
	}{
		{"class only", with("64Mi", nil), with("", ptr.To(int32(2))), "64Mi"},
		{"the Gateway's win", with("64Mi", nil), with("256Mi", nil), "256Mi"},
		{"the Gateway's alone", nil, with("256Mi", nil), "256Mi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eff := EffectiveNginxProxy(c.class, c.gateway)
			got := eff.EndpointsResources().Limits[corev1.ResourceMemory]
			if got.String() != c.want {
				t.Errorf("endpoints memory limit %s, want %s", got.String(), c.want)
			}
		})
	}
}

// TestImagePullSecretsOverlay: a Gateway's NginxProxy that lists image pull
// Secrets replaces its class's list; one that does not keeps it.
func TestImagePullSecretsOverlay(t *testing.T) {
	pod := func(names ...string) *v1alpha2.NginxProxySpec {
		var refs []v1alpha2.LocalSecretReference
		for _, n := range names {
			refs = append(refs, v1alpha2.LocalSecretReference{Name: n})
		}
		return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &v1alpha2.PodSpec{ImagePullSecrets: refs}}}}
	}
	names := func(s *v1alpha2.NginxProxySpec) []string {
		var out []string
		for _, r := range s.Kubernetes.Deployment.Pod.ImagePullSecrets {
			out = append(out, r.Name)
		}
		return out
	}
	if got := names(EffectiveNginxProxy(pod("class-registry"), pod("team-registry"))); strings.Join(got, ",") != "team-registry" {
		t.Errorf("the Gateway's list should replace the class's: %v", got)
	}
	gwReplicas := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr.To(int32(2))}}}
	if got := names(EffectiveNginxProxy(pod("class-registry"), gwReplicas)); strings.Join(got, ",") != "class-registry" {
		t.Errorf("a Gateway setting only replicas keeps the class's list: %v", got)
	}
}

// TestDNSResolverOverlay: a Gateway's dnsResolver replaces its class's
// servers whole, and overlays its other fields one by one.
func TestDNSResolverOverlay(t *testing.T) {
	addr := func(v string) []v1alpha2.DNSResolverAddress {
		return []v1alpha2.DNSResolverAddress{{Type: v1alpha2.DNSResolverIPAddressType, Value: v}}
	}
	class := &v1alpha2.NginxProxySpec{DNSResolver: &v1alpha2.DNSResolver{
		Addresses: []v1alpha2.DNSResolverAddress{{Type: v1alpha2.DNSResolverIPAddressType, Value: "10.0.0.10"}, {Type: v1alpha2.DNSResolverHostnameType, Value: "dns.example"}},
		Timeout:   ptr.To(v1alpha1.Duration("2s")), CacheTTL: ptr.To(v1alpha1.Duration("30s")),
	}}
	gw := &v1alpha2.NginxProxySpec{DNSResolver: &v1alpha2.DNSResolver{Addresses: addr("10.0.0.53"), CacheTTL: ptr.To(v1alpha1.Duration("5m")), DisableIPv6: ptr.To(true)}}
	got := EffectiveNginxProxy(class, gw).DNSResolver
	want := &v1alpha2.DNSResolver{Addresses: addr("10.0.0.53"), Timeout: ptr.To(v1alpha1.Duration("2s")), CacheTTL: ptr.To(v1alpha1.Duration("5m")), DisableIPv6: ptr.To(true)}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("overlay: got %+v, want %+v", got, want)
	}
	if got := EffectiveNginxProxy(class, &v1alpha2.NginxProxySpec{}).DNSResolver; !equality.Semantic.DeepEqual(got, class.DNSResolver) {
		t.Errorf("a Gateway without dnsResolver: got %+v, want the class's", got)
	}
	if got := EffectiveNginxProxy(nil, gw).DNSResolver; !equality.Semantic.DeepEqual(got, gw.DNSResolver) {
		t.Errorf("a Gateway without class settings: got %+v, want its own", got)
	}
	if class.DNSResolver.Addresses[0].Value != "10.0.0.10" || len(class.DNSResolver.Addresses) != 2 {
		t.Error("the overlay modified the class's spec")
	}
}
