package manager_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/podseal"
)

// TestProvisioningPodShaping: a GatewayClass's NginxProxy with NGINX
// Gateway Fabric's placement, volumes, host ports, hooks, Service exposure
// and patches gets them on the data plane the manager makes (on a real API
// server, which stores them as sealed); a patch of the endpoints
// container's command is left out and the Gateway's Programmed message
// names it. (The manager here runs with the tests' rights: the admission
// policies are test/envtest's TestPlacementRefusedByAdmission.)
func TestProvisioningPodShaping(t *testing.T) {
	ctx := context.Background()
	startProvisioningManager(t)
	ns := namespace(t)
	np := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shaping"}, Spec: v1alpha2.NginxProxySpec{
		Kubernetes: &v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{
				Pod: &v1alpha2.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
					Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gateway", Effect: corev1.TaintEffectNoSchedule}},
					Volumes:      []corev1.Volume{{Name: "geoip", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "geoip"}}}}},
				},
				Container: &v1alpha2.ContainerSpec{
					HostPorts:    []v1alpha2.HostPort{{Port: 8080, ContainerPort: 80}},
					VolumeMounts: []corev1.VolumeMount{{Name: "geoip", MountPath: "/usr/share/GeoIP", ReadOnly: true}},
					Lifecycle:    &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 3}}},
				},
				Patches: []v1alpha2.Patch{
					{Value: &apiextv1.JSON{Raw: []byte(`{"metadata":{"annotations":{"team.example.com/owner":"payments"}}}`)}},
					{Type: ptr.To(v1alpha2.PatchTypeJSONPatch), Value: &apiextv1.JSON{Raw: []byte(`[{"op":"replace","path":"/spec/template/spec/containers/1/command","value":["/bin/sh"]}]`)}},
				},
			},
			Service: &v1alpha2.ServiceSpec{Type: ptr.To(corev1.ServiceTypeLoadBalancer), LoadBalancerClass: ptr.To("example.com/internal"),
				NodePorts: []v1alpha2.NodePort{{Port: 30123, ListenerPort: 80}}},
		},
	}}
	class := provClass("prov-shaping", provController)
	class.Spec.ParametersRef = &gatewayv1.ParametersReference{Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy",
		Name: np.Name, Namespace: ptr.To(gatewayv1.Namespace(ns))}
	gw := provGateway(ns, "gw", "prov-shaping")
	create(t, np, class, gw)
	name := "gw-prov-shaping"
	wantDataPlane(t, ns, name, true)

	eventually(t, 30*time.Second, func() error {
		dep := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return err
		}
		spec := dep.Spec.Template.Spec
		nginx := spec.Containers[0]
		switch {
		case spec.NodeSelector["kubernetes.io/os"] != "linux" || len(spec.Tolerations) != 1:
			return fmt.Errorf("placement %v %v", spec.NodeSelector, spec.Tolerations)
		case nginx.Lifecycle == nil || nginx.Lifecycle.PreStop == nil || len(nginx.Ports) == 0 || nginx.Ports[len(nginx.Ports)-1].HostPort != 8080:
			return fmt.Errorf("NGINX container %+v", nginx)
		case dep.Annotations["team.example.com/owner"] != "payments":
			return fmt.Errorf("the patch's annotation is missing: %v", dep.Annotations)
		case spec.Containers[1].Command[0] != "/usr/bin/gatewall-endpoints":
			return fmt.Errorf("the endpoints container's command was patched: %v", spec.Containers[1].Command)
		}
		// The API server's defaults applied, the stored template keeps its seal.
		if _, ok := dep.Spec.Template.Annotations[podseal.Annotation]; !ok {
			return fmt.Errorf("the stored template has no seal")
		}
		svc := &corev1.Service{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			return err
		}
		if ptr.Deref(svc.Spec.LoadBalancerClass, "") != "example.com/internal" || len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort != 30123 {
			return fmt.Errorf("Service %+v", svc.Spec)
		}
		got := &gatewayv1.Gateway{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
		if c == nil || !strings.Contains(c.Message, "kubernetes.deployment.patches[1]: not applied: it changes what") {
			return fmt.Errorf("Programmed %+v does not name the patch left out", c)
		}
		return nil
	})
}
