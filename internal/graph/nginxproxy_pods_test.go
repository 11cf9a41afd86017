package graph

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// TestPodShapingOverrides: the placement and node-reaching settings of a
// Gateway's own NginxProxy (affinity, nodeSelector, tolerations, volumes,
// volumeMounts, hostPorts, lifecycle hooks) are left out unless its class
// lists their allowGatewayOverrides field, the class's used instead, and
// the Accepted message names each one left out; for a DaemonSet as for a
// Deployment. The readiness probe is a Gateway's to tune.
func TestPodShapingOverrides(t *testing.T) {
	pod := func(node string) *v1alpha2.PodSpec {
		return &v1alpha2.PodSpec{
			NodeSelector: map[string]string{"node": node},
			Tolerations:  []corev1.Toleration{{Key: node, Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}},
			}}},
			Volumes: []corev1.Volume{{Name: node, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/" + node}}}},
		}
	}
	container := func(port int32, cmd string) *v1alpha2.ContainerSpec {
		return &v1alpha2.ContainerSpec{
			HostPorts:      []v1alpha2.HostPort{{Port: port, ContainerPort: 80}},
			VolumeMounts:   []corev1.VolumeMount{{Name: cmd, MountPath: "/mnt/" + cmd}},
			Lifecycle:      &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{cmd}}}},
			ReadinessProbe: &v1alpha2.ReadinessProbeSpec{InitialDelaySeconds: ptr.To(port / 1000)},
		}
	}
	class := func(fields ...v1alpha2.GatewayOverrideField) *v1alpha2.NginxProxySpec {
		return &v1alpha2.NginxProxySpec{
			Kubernetes:            &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: pod("edge"), Container: container(8080, "edge")}},
			AllowGatewayOverrides: &v1alpha2.GatewayOverrides{Fields: fields},
		}
	}
	all := []v1alpha2.GatewayOverrideField{v1alpha2.OverrideScheduling, v1alpha2.OverrideVolumes, v1alpha2.OverrideHostPorts, v1alpha2.OverrideLifecycle}
	for _, c := range []struct {
		name       string
		class      *v1alpha2.NginxProxySpec
		daemonSet  bool
		wantOwn    bool
		wantInNote string
	}{
		{"class allows none", class(), false, false, "NginxProxy default/gw-np sets kubernetes.deployment.pod.affinity, kubernetes.deployment.pod.nodeSelector, " +
			"kubernetes.deployment.pod.tolerations, kubernetes.deployment.pod.volumes, kubernetes.deployment.container.volumeMounts, " +
			"kubernetes.deployment.container.hostPorts, kubernetes.deployment.container.lifecycle, which only"},
		{"class allows none, DaemonSet", class(), true, false, "sets kubernetes.daemonSet.pod.affinity, kubernetes.daemonSet.pod.nodeSelector, " +
			"kubernetes.daemonSet.pod.tolerations, kubernetes.daemonSet.pod.volumes, kubernetes.daemonSet.container.volumeMounts, " +
			"kubernetes.daemonSet.container.hostPorts, kubernetes.daemonSet.container.lifecycle, which only"},
		{"class allows all four", class(all...), false, true, ""},
		{"class allows all four, DaemonSet", class(all...), true, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			gw := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{}}
			if c.daemonSet {
				gw.Kubernetes.DaemonSet = &v1alpha2.DaemonSetSpec{Pod: pod("tenant"), Container: container(9090, "tenant")}
			} else {
				gw.Kubernetes.Deployment = &v1alpha2.DeploymentSpec{Pod: pod("tenant"), Container: container(9090, "tenant")}
			}
			g := Build(overlayInput(c.class, gw), key("default", "gw"))
			accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
			if accepted == nil || accepted.Status != metav1.ConditionTrue || !g.Valid {
				t.Fatalf("Gateway not accepted: %+v", accepted)
			}
			if c.wantInNote != "" && !strings.Contains(accepted.Message, c.wantInNote) {
				t.Errorf("Accepted message %q does not contain %q", accepted.Message, c.wantInNote)
			}
			if c.wantInNote == "" && strings.Contains(accepted.Message, "sets kubernetes") {
				t.Errorf("Accepted message %q names fields its class allows", accepted.Message)
			}
			d := g.NginxProxy.Workload()
			if d == nil || d.Pod == nil || d.Container == nil {
				t.Fatalf("no pod settings: %+v", g.NginxProxy.Kubernetes)
			}
			wantPod, wantContainer := pod("edge"), container(8080, "edge")
			if c.wantOwn {
				wantPod, wantContainer = pod("tenant"), container(9090, "tenant")
			}
			// The readiness probe is the Gateway's whatever its class allows.
			wantContainer.ReadinessProbe = container(9090, "tenant").ReadinessProbe
			if !reflect.DeepEqual(d.Pod, wantPod) {
				t.Errorf("pod settings %+v, want %+v", d.Pod, wantPod)
			}
			if !reflect.DeepEqual(d.Container, wantContainer) {
				t.Errorf("container settings %+v, want %+v", d.Container, wantContainer)
			}
			if g.NginxProxy.IsDaemonSet() != c.daemonSet {
				t.Errorf("DaemonSet %v, want %v", g.NginxProxy.IsDaemonSet(), c.daemonSet)
			}
		})
	}
}

// TestPodShapingNotProgrammed: the readiness probe's port, path and
// exposure, volumes named as the data plane's own and mounts on, inside or
// over its directories, of no volume, or Bidirectional are named as not
// programmed; what is usable is not.
func TestPodShapingNotProgrammed(t *testing.T) {
	bidi := corev1.MountPropagationBidirectional
	s := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{
		Pod: &v1alpha2.PodSpec{Volumes: []corev1.Volume{{Name: "agent-token"}, {Name: "geoip"}}},
		Container: &v1alpha2.ContainerSpec{
			ReadinessProbe: &v1alpha2.ReadinessProbeSpec{Port: ptr.To(int32(9000)), Expose: ptr.To(true), InitialDelaySeconds: ptr.To(int32(1))},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "geoip", MountPath: "/usr/share/GeoIP"},
				{Name: "geoip", MountPath: "/etc/nginx/geoip"},
				{Name: "geoip", MountPath: "/var/run/secrets"},
				{Name: "geoip", MountPath: "/"},
				{Name: "agent-token", MountPath: "/token"},
				{Name: "missing", MountPath: "/missing"},
				{Name: "geoip", MountPath: "/shared", MountPropagation: &bidi},
			},
		},
	}}}
	got := NotProgrammed(s)
	want := []string{
		"kubernetes.daemonSet.container.readinessProbe.{port, expose}: the data plane's readiness is answered at /readyz on the first port from 8081 up that no listener of the Gateway uses, not on the Service; initialDelaySeconds is used",
		"kubernetes.daemonSet.pod.volumes agent-token: left out: named as a volume of the data plane's own",
		"kubernetes.daemonSet.container.volumeMounts /etc/nginx/geoip, /var/run/secrets, /, /token, /missing, /shared: left out: on, inside or over a directory of the data plane's own, of no volume of pod.volumes, or Bidirectional",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NotProgrammed:\n got %q\nwant %q", got, want)
	}
	s.Kubernetes.DaemonSet.Pod.Volumes = s.Kubernetes.DaemonSet.Pod.Volumes[1:]
	s.Kubernetes.DaemonSet.Container = &v1alpha2.ContainerSpec{VolumeMounts: s.Kubernetes.DaemonSet.Container.VolumeMounts[:1],
		ReadinessProbe: &v1alpha2.ReadinessProbeSpec{Port: ptr.To(int32(8081)), Path: ptr.To("/readyz"), Expose: ptr.To(false)}}
	if got := NotProgrammed(s); got != nil {
		t.Errorf("NotProgrammed of usable settings: %q", got)
	}
}

// TestPatchesOverride: a Gateway's own patches are left out, and named,
// unless its class lists Patches; then they replace the class's.
func TestPatchesOverride(t *testing.T) {
	patch := func(v string) []v1alpha2.Patch {
		return []v1alpha2.Patch{{Value: &apiextv1.JSON{Raw: []byte(`{"metadata":{"annotations":{"by":"` + v + `"}}}`)}}}
	}
	for _, c := range []struct {
		name    string
		allowed []v1alpha2.GatewayOverrideField
		want    string
		note    string
	}{
		{"class allows none", nil, "class", "sets kubernetes.deployment.patches, kubernetes.service, which only"},
		{"class allows Service", []v1alpha2.GatewayOverrideField{v1alpha2.OverrideService}, "class", "sets kubernetes.deployment.patches, kubernetes.service.patches, which only"},
		{"class allows Patches and Service", []v1alpha2.GatewayOverrideField{v1alpha2.OverridePatches, v1alpha2.OverrideService}, "gateway", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			class := &v1alpha2.NginxProxySpec{
				Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Patches: patch("class")},
					Service: &v1alpha2.ServiceSpec{Patches: patch("class")}},
				AllowGatewayOverrides: &v1alpha2.GatewayOverrides{Fields: c.allowed},
			}
			gw := &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Patches: patch("gateway")},
				Service: &v1alpha2.ServiceSpec{Patches: patch("gateway")}}}
			g := Build(overlayInput(class, gw), key("default", "gw"))
			accepted := meta.FindStatusCondition(g.Conditions, string(gatewayv1.GatewayConditionAccepted))
			if accepted == nil || !g.Valid {
				t.Fatalf("Gateway not accepted: %+v", accepted)
			}
			if c.note != "" && !strings.Contains(accepted.Message, c.note) {
				t.Errorf("Accepted message %q does not contain %q", accepted.Message, c.note)
			}
			k := g.NginxProxy.Kubernetes
			for what, ps := range map[string][]v1alpha2.Patch{"Deployment": k.Deployment.Patches, "Service": k.Service.Patches} {
				if len(ps) != 1 || !strings.Contains(string(ps[0].Value.Raw), `"`+c.want+`"`) {
					t.Errorf("%s patches %+v, want the %s's", what, ps, c.want)
				}
			}
		})
	}
}
