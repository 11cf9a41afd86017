package apicases

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// podShapingCases are NGINX Gateway Fabric's scheduling and pod-shaping
// fields: pod affinity, nodeSelector, tolerations and volumes; the NGINX
// container's lifecycle, readinessProbe, hostPorts and volumeMounts; the
// Service's loadBalancerClass and nodePorts; autoscaling.metrics.
func podShapingCases() []Case {
	const (
		dep = "spec.kubernetes.deployment"
		ds  = "spec.kubernetes.daemonSet"
		svc = "spec.kubernetes.service"
	)
	withPod := func(p v1alpha2.PodSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &p}}
		})
	}
	withContainer := func(c v1alpha2.ContainerSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{Container: &c}}
		})
	}
	withService := func(v v1alpha2.ServiceSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) { s.Kubernetes = &v1alpha2.KubernetesSpec{Service: &v} })
	}
	withMetrics := func(ms ...autoscalingv2.MetricSpec) *v1alpha2.NginxProxy {
		return np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Autoscaling: &v1alpha2.AutoscalingSpec{
				Enable: true, MaxReplicas: 4, Metrics: ms}}}
		})
	}
	n := func(name string) string { return "NginxProxy: " + name }
	tol := func(t corev1.Toleration) v1alpha2.PodSpec {
		return v1alpha2.PodSpec{Tolerations: []corev1.Toleration{t}}
	}
	hook := func(h corev1.LifecycleHandler) v1alpha2.ContainerSpec {
		return v1alpha2.ContainerSpec{Lifecycle: &corev1.Lifecycle{PreStop: &h}}
	}
	cpu := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("500m"))}}}
	selector := map[string]string{}
	for i := range 33 {
		selector[fmt.Sprintf("example.com/k%d", i)] = "v"
	}
	var tolerations []corev1.Toleration
	for range 33 {
		tolerations = append(tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	}
	lb, cluster := corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP
	nodePorts := func(ps ...int32) []v1alpha2.NodePort {
		var out []v1alpha2.NodePort
		for i := 0; i < len(ps); i += 2 {
			out = append(out, v1alpha2.NodePort{Port: ps[i], ListenerPort: ps[i+1]})
		}
		return out
	}
	return []Case{
		{Name: n("pod placement as NGINX Gateway Fabric's examples set it"), Object: withPod(v1alpha2.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "linux", "node-role.example.com/edge": ""},
			Tolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gateway", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(30))},
			},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}}},
			Volumes: []corev1.Volume{{Name: "geoip", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "geoip"}}}}},
		})},
		{Name: n("33 nodeSelector labels"), Object: withPod(v1alpha2.PodSpec{NodeSelector: selector}),
			Field: dep + ".pod.nodeSelector", Message: "must have at most 32 items"},
		{Name: n("33 tolerations"), Object: withPod(v1alpha2.PodSpec{Tolerations: tolerations}),
			Field: dep + ".pod.tolerations", Message: "must have at most 32 items"},
		{Name: n("toleration operator Gt"), Object: withPod(tol(corev1.Toleration{Key: "a", Operator: "Gt"})),
			Field: dep + ".pod.tolerations", Message: validation.MsgTolerationEnums},
		{Name: n("toleration effect NoRun"), Object: withPod(tol(corev1.Toleration{Key: "a", Effect: "NoRun"})),
			Field: dep + ".pod.tolerations", Message: validation.MsgTolerationEnums},
		{Name: n("toleration without key, operator Equal"), Object: withPod(tol(corev1.Toleration{Operator: corev1.TolerationOpEqual, Value: "x"})),
			Field: dep + ".pod.tolerations", Message: validation.MsgTolerationKey},
		{Name: n("toleration Exists with a value"), Object: withPod(tol(corev1.Toleration{Key: "a", Operator: corev1.TolerationOpExists, Value: "x"})),
			Field: dep + ".pod.tolerations", Message: validation.MsgTolerationKey},
		{Name: n("tolerationSeconds with NoSchedule"), Object: withPod(tol(corev1.Toleration{Key: "a", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr(int64(5))})),
			Field: dep + ".pod.tolerations", Message: validation.MsgTolerationSeconds},
		{Name: n("two volumes of one name"), Object: withPod(v1alpha2.PodSpec{Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}}), Field: dep + ".pod.volumes[1]", Message: "Duplicate value"},

		{Name: n("NGINX container as NGINX Gateway Fabric's examples set it"), Object: withContainer(v1alpha2.ContainerSpec{
			Lifecycle: &corev1.Lifecycle{
				PreStop:   &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}},
				PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/true"}}},
			},
			ReadinessProbe: &v1alpha2.ReadinessProbeSpec{Port: ptr(int32(8081)), Path: ptr("/readyz"), InitialDelaySeconds: ptr(int32(3)), Expose: ptr(false)},
			HostPorts:      []v1alpha2.HostPort{{Port: 80, ContainerPort: 80}, {Port: 443, ContainerPort: 443}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "geoip", MountPath: "/usr/share/GeoIP", ReadOnly: true}},
		})},
		{Name: n("lifecycle hook with two actions"), Object: withContainer(hook(corev1.LifecycleHandler{
			Sleep: &corev1.SleepAction{Seconds: 1}, TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}})),
			Field: ds + ".container.lifecycle", Message: validation.MsgLifecycleOneOf},
		{Name: n("lifecycle hook with no action"), Object: withContainer(hook(corev1.LifecycleHandler{})),
			Field: ds + ".container.lifecycle", Message: validation.MsgLifecycleOneOf},
		{Name: n("exec hook without a command"), Object: withContainer(hook(corev1.LifecycleHandler{Exec: &corev1.ExecAction{}})),
			Field: ds + ".container.lifecycle", Message: validation.MsgLifecycleAction},
		{Name: n("sleep hook of 0 seconds"), Object: withContainer(hook(corev1.LifecycleHandler{Sleep: &corev1.SleepAction{}})),
			Field: ds + ".container.lifecycle", Message: validation.MsgLifecycleAction},
		{Name: n("lifecycle stopSignal"), Object: withContainer(v1alpha2.ContainerSpec{Lifecycle: &corev1.Lifecycle{StopSignal: ptr(corev1.SIGQUIT)}}),
			Field: ds + ".container.lifecycle", Message: validation.MsgLifecycleStop},
		{Name: n("readinessProbe port 0"), Object: withContainer(v1alpha2.ContainerSpec{ReadinessProbe: &v1alpha2.ReadinessProbeSpec{Port: ptr(int32(0))}}),
			Field: ds + ".container.readinessProbe.port", Message: "should be greater than or equal to 1"},
		{Name: n("readinessProbe path with a space"), Object: withContainer(v1alpha2.ContainerSpec{ReadinessProbe: &v1alpha2.ReadinessProbeSpec{Path: ptr("/ready z")}}),
			Field: ds + ".container.readinessProbe.path", Message: "should match '" + validation.ProbePathPattern + "'"},
		{Name: n("readinessProbe initialDelaySeconds 3601"), Object: withContainer(v1alpha2.ContainerSpec{ReadinessProbe: &v1alpha2.ReadinessProbeSpec{InitialDelaySeconds: ptr(int32(3601))}}),
			Field: ds + ".container.readinessProbe.initialDelaySeconds", Message: "should be less than or equal to 3600"},
		{Name: n("host port 65536"), Object: withContainer(v1alpha2.ContainerSpec{HostPorts: []v1alpha2.HostPort{{Port: 65536, ContainerPort: 80}}}),
			Field: ds + ".container.hostPorts[0].port", Message: "should be less than or equal to 65535"},
		{Name: n("host port twice"), Object: withContainer(v1alpha2.ContainerSpec{HostPorts: []v1alpha2.HostPort{{Port: 80, ContainerPort: 80}, {Port: 80, ContainerPort: 8080}}}),
			Field: ds + ".container.hostPorts", Message: validation.MsgHostPortTwice},
		{Name: n("two mounts on one path"), Object: withContainer(v1alpha2.ContainerSpec{VolumeMounts: []corev1.VolumeMount{
			{Name: "a", MountPath: "/data"}, {Name: "b", MountPath: "/data"}}}),
			Field: ds + ".container.volumeMounts[1]", Message: "Duplicate value"},
		{Name: n("WAF container with a lifecycle"), Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{WAFContainers: &v1alpha2.WAFContainers{
				Enforcer: &v1alpha2.ContainerSpec{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}}}}}
		}), Field: dep + ".wafContainers", Message: validation.MsgWAFContainerOnly},

		{Name: n("Service loadBalancerClass and nodePorts"), Object: withService(v1alpha2.ServiceSpec{Type: &lb,
			LoadBalancerClass: ptr("example.com/internal"), NodePorts: nodePorts(30080, 80, 30443, 443)})},
		{Name: n("loadBalancerClass on a ClusterIP Service"), Object: withService(v1alpha2.ServiceSpec{Type: &cluster, LoadBalancerClass: ptr("example.com/internal")}),
			Field: svc, Message: validation.MsgLBClassType},
		{Name: n("loadBalancerClass with a space"), Object: withService(v1alpha2.ServiceSpec{LoadBalancerClass: ptr("example.com/my lb")}),
			Field: svc + ".loadBalancerClass", Message: "should match '" + validation.TopologyKeyPattern + "'"},
		{Name: n("nodePorts on a ClusterIP Service"), Object: withService(v1alpha2.ServiceSpec{Type: &cluster, NodePorts: nodePorts(30080, 80)}),
			Field: svc, Message: validation.MsgNodePortsType},
		{Name: n("node port 0"), Object: withService(v1alpha2.ServiceSpec{NodePorts: nodePorts(0, 80)}),
			Field: svc + ".nodePorts[0].port", Message: "should be greater than or equal to 1"},
		{Name: n("listener port twice"), Object: withService(v1alpha2.ServiceSpec{NodePorts: nodePorts(30080, 80, 30081, 80)}),
			Field: svc + ".nodePorts", Message: validation.MsgNodePortTwice},

		{Name: n("patches as NGINX Gateway Fabric's examples write them"), Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{
				Deployment: &v1alpha2.DeploymentSpec{Patches: []v1alpha2.Patch{
					{Value: &apiextv1.JSON{Raw: []byte(`{"metadata":{"annotations":{"a":"b"}}}`)}},
					{Type: ptr(v1alpha2.PatchTypeJSONPatch), Value: &apiextv1.JSON{Raw: []byte(`[{"op":"add","path":"/metadata/labels/x","value":"y"}]`)}},
				}},
				Service: &v1alpha2.ServiceSpec{Patches: []v1alpha2.Patch{{Type: ptr(v1alpha2.PatchTypeMerge), Value: &apiextv1.JSON{Raw: []byte(`{"metadata":{"annotations":{"c":"d"}}}`)}}}},
			}
		})},
		{Name: n("patch of type Strategic"), Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{DaemonSet: &v1alpha2.DaemonSetSpec{Patches: []v1alpha2.Patch{{Type: ptr(v1alpha2.PatchType("Strategic"))}}}}
		}), Field: ds + ".patches[0].type", Message: `Unsupported value: "Strategic"`},
		{Name: n("9 Service patches"), Object: withService(v1alpha2.ServiceSpec{Patches: make([]v1alpha2.Patch, 9)}),
			Field: svc + ".patches", Message: "must have at most 8 items"},

		{Name: n("autoscaling metrics"), Object: withMetrics(cpu, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "nginx_http_requests_per_second"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("100"))}}})},
		{Name: n("autoscaling metric of type Pods with a resource"), Object: withMetrics(autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Resource: cpu.Resource}),
			Field: dep + ".autoscaling.metrics", Message: validation.MsgMetricType},
		{Name: n("autoscaling metric of type Requests"), Object: withMetrics(autoscalingv2.MetricSpec{Type: "Requests"}),
			Field: dep + ".autoscaling.metrics", Message: validation.MsgMetricType},
		{Name: n("9 autoscaling metrics"), Object: withMetrics(cpu, cpu, cpu, cpu, cpu, cpu, cpu, cpu, cpu),
			Field: dep + ".autoscaling.metrics", Message: "must have at most 8 items"},
	}
}
