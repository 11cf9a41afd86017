package envtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/provisioner"
	"github.com/gatewall/gatewall/test/testenv"
)

// TestPlacementRefusedByAdmission: a data plane whose NginxProxy sets NGINX
// Gateway Fabric's node-reaching fields (a node selector, a toleration, a
// host port, a host path) is refused by config/rbac's manager-placement
// policy until the installation's dataplane-placement ConfigMap, which the
// manager cannot write, lists them, and then only what it lists; the
// refusal does not stop the other
// objects (the Service is applied), and it reaches the Gateway's status:
// Programmed False, naming the policy, written by the manager running as
// its ServiceAccount (before, the failed apply returned before any status
// was written).
func TestPlacementRefusedByAdmission(t *testing.T) {
	ctx := context.Background()
	mgr := installRBAC(t)
	ns := "placement"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	np := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Pod: &v1alpha2.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gateway", Effect: corev1.TaintEffectNoSchedule}},
			Volumes:      []corev1.Volume{{Name: "geoip", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/geoip"}}}},
		},
		Container: &v1alpha2.ContainerSpec{
			HostPorts:    []v1alpha2.HostPort{{Port: 8080, ContainerPort: 80}},
			VolumeMounts: []corev1.VolumeMount{{Name: "geoip", MountPath: "/usr/share/GeoIP", ReadOnly: true}},
		},
	}}}

	t.Run("the provisioner's apply is refused for the Deployment only", func(t *testing.T) {
		gw := &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx",
				Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
		}
		if err := env.Client.Create(ctx, gw); err != nil {
			t.Fatal(err)
		}
		objs := provisioner.Objects(provisioner.Params{
			Gateway: gw, NginxProxy: np, Ports: []int32{80}, ReadinessPort: 8081,
			AgentConfig: []byte("command: {}\n"), AgentCA: []byte("CA"),
			AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
			Images: provisioner.DefaultImages, Owner: admissionOwner,
		})
		err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objs, nil)
		var refused *provisioner.RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("applying: %v, want a refusal", err)
		}
		if len(refused.Refusals) != 1 || !strings.HasPrefix(refused.Refusals[0], "Deployment placement/direct-nginx:") ||
			!strings.Contains(refused.Refusals[0], "manager-placement") {
			t.Errorf("refusals %q, want the Deployment's by manager-placement", refused.Refusals)
		}
		// The policy says the first of its rules the Deployment breaks.
		if !strings.Contains(err.Error(), "mounts only empty directories") {
			t.Errorf("the refusal %q does not say why", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "direct-nginx"}, &corev1.Service{}); err != nil {
			t.Errorf("the Service beside the refused Deployment: %v", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "direct-nginx"}, &appsv1.Deployment{}); err == nil {
			t.Error("the refused Deployment exists")
		}
	})

	t.Run("the installation's dataplane-placement allows exactly what it lists", func(t *testing.T) {
		gw := &gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "allowed"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "nginx",
				Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
		}
		if err := env.Client.Create(ctx, gw); err != nil {
			t.Fatal(err)
		}
		objects := func(np *v1alpha2.NginxProxySpec) []client.Object {
			return provisioner.Objects(provisioner.Params{
				Gateway: gw, NginxProxy: np, Ports: []int32{80}, ReadinessPort: 8081,
				AgentConfig: []byte("command: {}\n"), AgentCA: []byte("CA"),
				AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
				Images: provisioner.DefaultImages, Owner: admissionOwner,
			})
		}
		withAffinity := np.DeepCopy()
		withAffinity.Kubernetes.Deployment.Pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}}
		otherNode := np.DeepCopy()
		otherNode.Kubernetes.Deployment.Pod.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-with-secrets"}
		otherPath := np.DeepCopy()
		otherPath.Kubernetes.Deployment.Pod.Volumes[0].HostPath.Path = "/"
		otherPort := np.DeepCopy()
		otherPort.Kubernetes.Deployment.Container.HostPorts[0].Port = 10250

		key := client.ObjectKey{Namespace: "gatewall-system", Name: "gatewall-dataplane-placement"}
		params := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, key, params); err != nil {
			t.Fatalf("the installation's dataplane-placement: %v", err)
		}
		// The manager cannot allow itself anything.
		mine := params.DeepCopy()
		mine.Data = map[string]string{"nodeSelectors": "kubernetes.io/hostname=node-with-secrets"}
		if err := mgr.Patch(ctx, mine, client.MergeFrom(params)); err == nil {
			t.Error("the manager changed dataplane-placement")
		}
		// Nor make a ConfigMap of its own that is not an agent's, even one
		// with a data plane's marks.
		forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forged-dataplane-placement",
			Labels:          map[string]string{"app.kubernetes.io/managed-by": "gatewall"},
			Annotations:     map[string]string{"gatewall.io/controller-name": admissionOwner.ControllerName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Name: gw.Name, UID: gw.UID, Controller: ptr.To(true)}},
		}}
		if err := mgr.Create(ctx, forged); err == nil || !strings.Contains(err.Error(), "only ConfigMaps") {
			t.Errorf("the manager made a ConfigMap that is not an agent's: %v", err)
		}
		if err := mgr.Delete(ctx, params.DeepCopy()); err == nil {
			t.Error("the manager deleted dataplane-placement")
		}
		// The platform team allows the class's values.
		params.Data = map[string]string{
			"nodeSelectors": "kubernetes.io/os=linux\nnode-role.example.com/edge=",
			"tolerations":   "dedicated=gateway:NoSchedule",
			"hostPorts":     "8080\n8443",
			"volumes":       "hostPath:/var/lib/geoip\nconfigMap:geoip",
		}
		if err := env.Client.Update(ctx, params); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			params.Data = nil
			if err := env.Client.Update(ctx, params); err != nil {
				t.Errorf("restoring dataplane-placement: %v", err)
			}
		})
		// The API server reads params from its own cache.
		testenv.Eventually(t, 30*time.Second, func() error {
			return provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objects(np), nil)
		})
		for what, spec := range map[string]*v1alpha2.NginxProxySpec{
			"an affinity": withAffinity, "another node": otherNode, "another host path": otherPath, "another host port": otherPort,
		} {
			var refused *provisioner.RefusedError
			if err := provisioner.Apply(ctx, mgr, nil, admissionOwner, gw, objects(spec), nil); !errors.As(err, &refused) {
				t.Errorf("%s not listed: %v, want a refusal", what, err)
			}
		}
	})

	t.Run("the manager says so in the Gateway's status", func(t *testing.T) {
		m, err := manager.New(mgrConfig(), manager.Options{
			ControllerName: "gatewall.test/placement", GatewayClassName: "placement", Namespace: manager.DefaultNamespace,
			MetricsAddr: "0", ProbeAddr: "0", LeaderElection: true, LeaderElectionID: "placement-test",
			Agent: manager.AgentOptions{ListenAddress: "127.0.0.1:0", ServerAddress: "gatewall-agent.test:8443", TLSSecret: "placement-agent-tls"},
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.RunManager(t, m)
		proxy := &v1alpha2.NginxProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "placement"}, Spec: *np}
		class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "placement"},
			Spec: gatewayv1.GatewayClassSpec{ControllerName: "gatewall.test/placement", ParametersRef: &gatewayv1.ParametersReference{
				Group: gatewayv1.Group(v1alpha2.GroupVersion.Group), Kind: "NginxProxy", Name: "placement", Namespace: ptr.To(gatewayv1.Namespace(ns))}}}
		gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "placed"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "placement",
				Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
		for _, o := range []client.Object{proxy, class, gw} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Eventually(t, 60*time.Second, func() error {
			got := &gatewayv1.Gateway{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(gw), got); err != nil {
				return err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(gatewayv1.GatewayReasonInvalid) ||
				!strings.Contains(c.Message, "Deployment placement/placed-placement") || !strings.Contains(c.Message, "manager-placement") {
				return fmt.Errorf("Programmed %+v, want False naming the refused Deployment and the policy", c)
			}
			return nil
		})
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "placed-placement"}, &corev1.Service{}); err != nil {
			t.Errorf("the Service beside the refused Deployment: %v", err)
		}
	})
}
