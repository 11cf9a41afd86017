package envtest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/podseal"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// TestPodSealSurvivesDefaulting: the seal the provisioner puts on a
// data-plane pod template holds for what the real API server makes of it,
// the Deployment's template and a pod created from the template (as the
// ReplicaSet controller creates them), with the API server's defaults
// applied: the projection the seal covers is the same bytes before and
// after. Every shape of template the provisioner renders is tried: WAF on
// and off, a metrics port, resources, images of an NginxProxy, and NGINX
// Gateway Fabric's placement, volumes (of the kinds whose fields the API
// server defaults), mounts, host ports and hooks.
func TestPodSealSurvivesDefaulting(t *testing.T) {
	ctx := context.Background()
	ns := "pod-seal"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{42}, podseal.KeySize)
	resources := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("1")}}
	for name, np := range map[string]*v1alpha2.NginxProxySpec{
		"defaults": {},
		"waf":      {WAF: v1alpha2.WAFEnabled},
		"metrics, resources and an image": {Metrics: &v1alpha2.Metrics{Port: ptr.To(int32(9113))}, Kubernetes: &v1alpha2.KubernetesSpec{
			Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr.To(int32(2)), Container: &v1alpha2.ContainerSpec{
				Resources: resources, Image: &v1alpha2.Image{Repository: ptr.To("registry.example/nginx"), Tag: ptr.To("1.2.3")}}}}},
		"NGINX Gateway Fabric's scheduling and pod-shaping fields": podShapingSpec(),
	} {
		t.Run(name, func(t *testing.T) {
			gw := &gatewayv1.Gateway{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("gw-%d", len(name)), UID: "7e0d9a3c-0000-4000-8000-00000000000a"},
				Spec:       gatewayv1.GatewaySpec{GatewayClassName: "nginx"},
			}
			objs := provisioner.Objects(provisioner.Params{
				Gateway: gw, NginxProxy: np, Ports: []int32{80, 443}, ReadinessPort: 8081,
				AgentConfig: []byte("command: {}\n"), AgentCA: []byte("CA"),
				AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
				Images: provisioner.DefaultImages, Owner: admissionOwner, SealKey: key,
			})
			dep := find[*appsv1.Deployment](t, objs)
			sa := find[*corev1.ServiceAccount](t, objs)
			rendered := dep.Spec.Template
			if _, ok := rendered.Annotations[podseal.Annotation]; !ok {
				t.Fatal("the rendered template has no seal")
			}
			// The objects name a Gateway that is not in this API server as
			// their owner: no garbage collector runs here to mind.
			for _, o := range []client.Object{sa, dep} {
				if err := env.Client.Create(ctx, o.DeepCopyObject().(client.Object)); err != nil {
					t.Fatal(err)
				}
			}
			stored := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), stored); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{ObjectMeta: *rendered.ObjectMeta.DeepCopy(), Spec: *rendered.Spec.DeepCopy()}
			pod.Namespace, pod.GenerateName = ns, dep.Name+"-"
			if err := env.Client.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			created := &corev1.Pod{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), created); err != nil {
				t.Fatal(err)
			}

			want, err := podseal.Projection(&rendered.Spec)
			if err != nil {
				t.Fatal(err)
			}
			for what, spec := range map[string]*corev1.PodSpec{"the stored Deployment's template": &stored.Spec.Template.Spec, "the created pod": &created.Spec} {
				got, err := podseal.Projection(spec)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s projects otherwise than the rendered template:\nrendered: %s\nstored:   %s", what, want, got)
				}
			}
			if err := podseal.Verify(key, gw.UID, created); err != nil {
				t.Errorf("the created pod fails its seal: %v", err)
			}
			fromTemplate := &corev1.Pod{ObjectMeta: stored.Spec.Template.ObjectMeta, Spec: stored.Spec.Template.Spec}
			if err := podseal.Verify(key, gw.UID, fromTemplate); err != nil {
				t.Errorf("a pod of the stored template fails its seal: %v", err)
			}
			// What the API server defaulted is there: the test compares
			// defaulted objects, not the rendered ones again.
			if created.Spec.DNSPolicy == "" || created.Spec.EnableServiceLinks == nil || stored.Spec.Template.Spec.SchedulerName == "" {
				t.Errorf("the API server defaulted nothing: dnsPolicy %q, schedulerName %q", created.Spec.DNSPolicy, stored.Spec.Template.Spec.SchedulerName)
			}
		})
	}
}

// TestPodSealSurvivesDaemonSet: a DaemonSet's pods carry what the
// DaemonSet controller adds to its template (an affinity to their node, the
// tolerations of node conditions); the seal covers neither, so they pass it
// as a Deployment's pods do, after the API server's defaults.
func TestPodSealSurvivesDaemonSet(t *testing.T) {
	ctx := context.Background()
	ns := "pod-seal-daemonset"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{42}, podseal.KeySize)
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw", UID: "7e0d9a3c-0000-4000-8000-00000000000b"},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "nginx"},
	}
	objs := provisioner.Objects(provisioner.Params{
		Gateway: gw, NginxProxy: &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{}}},
		Ports: []int32{80}, ReadinessPort: 8081, AgentConfig: []byte("command: {}\n"), AgentCA: []byte("CA"),
		AgentServer: "gatewall-agent.gatewall-system.svc:8443", AgentServerName: "gatewall-agent.gatewall-system.svc",
		Images: provisioner.DefaultImages, Owner: admissionOwner, SealKey: key,
	})
	ds := find[*appsv1.DaemonSet](t, objs)
	if err := env.Client.Create(ctx, ds.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	stored := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ds), stored); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: *stored.Spec.Template.ObjectMeta.DeepCopy(), Spec: *stored.Spec.Template.Spec.DeepCopy()}
	pod.Namespace, pod.GenerateName = ns, ds.Name+"-"
	// As the DaemonSet controller makes a pod for node "node-1".
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}}}}}}
	for _, taint := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: taint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	}
	for _, taint := range []string{"node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable"} {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: taint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	created := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), created); err != nil {
		t.Fatal(err)
	}
	if err := podseal.Verify(key, gw.UID, created); err != nil {
		t.Errorf("a DaemonSet's pod fails its seal: %v", err)
	}
}

// podShapingSpec sets every scheduling and pod-shaping field of NGINX
// Gateway Fabric's, with volumes of the kinds the API server defaults
// fields of (a host path's type, a downward API's mode and field
// version, a Secret's and a projection's modes).
func podShapingSpec() *v1alpha2.NginxProxySpec {
	return &v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
		Pod: &v1alpha2.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gateway", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(30))},
			},
			Affinity: &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: corev1.NodeSelectorTerm{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "role", Operator: corev1.NodeSelectorOpExists}}}}},
				},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
					PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "gw"}}}}}},
			},
			Volumes: []corev1.Volume{
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/geoip"}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{
					Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
				{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "extra-certs"}}},
				{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
					ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "bundle"}}}}}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("64Mi"))}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}}},
			},
		},
		Container: &v1alpha2.ContainerSpec{
			Lifecycle: &corev1.Lifecycle{
				PreStop:   &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}},
				PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/started", Port: intstr.FromInt32(8081)}},
			},
			ReadinessProbe: &v1alpha2.ReadinessProbeSpec{InitialDelaySeconds: ptr.To(int32(3))},
			HostPorts:      []v1alpha2.HostPort{{Port: 8080, ContainerPort: 80}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "host", MountPath: "/usr/share/GeoIP", ReadOnly: true},
				{Name: "info", MountPath: "/etc/podinfo"},
				{Name: "certs", MountPath: "/etc/extra-certs"},
				{Name: "bundle", MountPath: "/etc/bundle"},
				{Name: "data", MountPath: "/data", SubPath: "nginx"},
				{Name: "scratch", MountPath: "/scratch"},
				{Name: "cache", MountPath: "/cache"},
			},
		},
	}}}
}
