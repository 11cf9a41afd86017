package graph

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestGatewayOverrides: a Gateway's own NginxProxy may not choose its data
// plane's images nor its Service's exposure unless its class allows it; what
// it may not is left out (the class's values used) and its Accepted message
// says so, the Gateway still accepted.
func TestGatewayOverrides(t *testing.T) {
	lb, clusterIP := corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP
	image := &v1alpha2.Image{Repository: ptr.To("attacker.example/nginx"), Tag: ptr.To("evil")}
	gateway := func() *v1alpha2.NginxProxySpec {
		return &v1alpha2.NginxProxySpec{
			WorkerConnections: ptr.To(int32(2048)),
			Kubernetes: &v1alpha2.KubernetesSpec{
				Deployment: &v1alpha2.DeploymentSpec{
					Replicas:      ptr.To(int32(3)),
					Container:     &v1alpha2.ContainerSpec{Image: image},
					WAFContainers: &v1alpha2.WAFContainers{Enforcer: &v1alpha2.ContainerSpec{Image: image}},
				},
				Service: &v1alpha2.ServiceSpec{Type: &lb},
			},
			// A Gateway cannot grant itself what only its class may.
			AllowGatewayOverrides: &v1alpha2.GatewayOverrides{Fields: []v1alpha2.GatewayOverrideField{v1alpha2.OverrideImages, v1alpha2.OverrideService}},
		}
	}
	class := func(fields ...v1alpha2.GatewayOverrideField) *v1alpha2.NginxProxySpec {
		s := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Service: &v1alpha2.ServiceSpec{Type: &clusterIP}}}
		if fields != nil {
			s.AllowGatewayOverrides = &v1alpha2.GatewayOverrides{Fields: fields}
		}
		return s
	}
	for _, c := range []struct {
		name          string
		class         *v1alpha2.NginxProxySpec
		wantImage     bool
		wantService   corev1.ServiceType
		wantInMessage []string
	}{
		{"class allows nothing", class(), false, clusterIP, []string{
			"NginxProxy default/gw-np sets allowGatewayOverrides, kubernetes.deployment.container.image, kubernetes.deployment.wafContainers.enforcer.image, kubernetes.service",
			"GatewayClass's NginxProxy (gatewall-system/class-np)"}},
		{"class allows images", class(v1alpha2.OverrideImages), true, clusterIP, []string{"sets allowGatewayOverrides, kubernetes.service,"}},
		{"class allows both", class(v1alpha2.OverrideImages, v1alpha2.OverrideService), true, lb, []string{"sets allowGatewayOverrides, which only"}},
		{"no class NginxProxy", nil, false, "", []string{"sets allowGatewayOverrides, kubernetes.deployment.container.image"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := Build(overlayInput(c.class, gateway()), key("default", "gw"))
			accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
			if accepted == nil || accepted.Status != metav1.ConditionTrue || !g.Valid {
				t.Fatalf("Gateway not accepted: %+v", accepted)
			}
			for _, want := range c.wantInMessage {
				if !strings.Contains(accepted.Message, want) {
					t.Errorf("Accepted message %q does not contain %q", accepted.Message, want)
				}
			}
			np := g.NginxProxy
			if got := np.Kubernetes.Deployment.Container != nil && np.Kubernetes.Deployment.Container.Image != nil; got != c.wantImage {
				t.Errorf("the Gateway's image applied: %v, want %v", got, c.wantImage)
			}
			var svc corev1.ServiceType
			if np.Kubernetes.Service != nil && np.Kubernetes.Service.Type != nil {
				svc = *np.Kubernetes.Service.Type
			}
			if svc != c.wantService {
				t.Errorf("Service type %q, want %q", svc, c.wantService)
			}
			if *np.WorkerConnections != 2048 || *np.Kubernetes.Deployment.Replicas != 3 {
				t.Errorf("what any Gateway may set was dropped: %+v", np)
			}
			if c.class == nil && np.AllowGatewayOverrides != nil || c.class != nil && !reflect.DeepEqual(np.AllowGatewayOverrides, c.class.AllowGatewayOverrides) {
				t.Errorf("allowGatewayOverrides %+v is not the class's", np.AllowGatewayOverrides)
			}
		})
	}
}

// TestInfrastructureMetadata: unprefixed labels and annotations of a
// Gateway's spec.infrastructure reach its data plane; prefixed ones only
// when the class lists the key or its prefix.
func TestInfrastructureMetadata(t *testing.T) {
	gw := &gatewayv1.Gateway{Spec: gatewayv1.GatewaySpec{Infrastructure: &gatewayv1.GatewayInfrastructure{
		Labels: map[gatewayv1.LabelKey]gatewayv1.LabelValue{"team": "a", "example.com/owner": "a", "istio.io/rev": "x"},
		Annotations: map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{
			"note": "n", "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing", "prometheus.io/scrape": "true",
		},
	}}}
	np := &v1alpha2.NginxProxySpec{AllowGatewayOverrides: &v1alpha2.GatewayOverrides{InfrastructureKeys: []string{"example.com/owner", "prometheus.io/"}}}
	labels, annotations, refused := InfrastructureMetadata(gw, np)
	if want := map[string]string{"team": "a", "example.com/owner": "a"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %v, want %v", labels, want)
	}
	if want := map[string]string{"note": "n", "prometheus.io/scrape": "true"}; !reflect.DeepEqual(annotations, want) {
		t.Errorf("annotations %v, want %v", annotations, want)
	}
	if want := []string{"annotation service.beta.kubernetes.io/aws-load-balancer-scheme", "label istio.io/rev"}; !reflect.DeepEqual(refused, want) {
		t.Errorf("refused %v, want %v", refused, want)
	}
	if _, _, refused := InfrastructureMetadata(gw, nil); len(refused) != 4 {
		t.Errorf("without a class list every prefixed key is left out: %v", refused)
	}
}
