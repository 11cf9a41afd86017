package provisioner

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/podseal"
)

// ngfPodShaping is an NginxProxy spec as NGINX Gateway Fabric's users
// write its scheduling and pod-shaping fields, with a volume and a mount
// of the data plane's own (left out) among them.
const ngfPodShaping = `
kubernetes:
  deployment:
    autoscaling:
      enable: true
      maxReplicas: 4
      targetCPUUtilizationPercentage: 70
      metrics:
      - type: Pods
        pods:
          metric: {name: nginx_http_requests_per_second}
          target: {type: AverageValue, averageValue: "100"}
    pod:
      nodeSelector: {kubernetes.io/os: linux}
      tolerations:
      - {key: dedicated, operator: Equal, value: gateway, effect: NoSchedule}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: gw}}
      volumes:
      - name: geoip
        configMap: {name: geoip}
      - name: agent-token
        emptyDir: {}
    container:
      lifecycle:
        preStop:
          sleep: {seconds: 5}
      readinessProbe: {initialDelaySeconds: 4}
      hostPorts:
      - {port: 8443, containerPort: 443}
      - {port: 8080, containerPort: 80}
      volumeMounts:
      - {name: geoip, mountPath: /usr/share/GeoIP, readOnly: true}
      - {name: geoip, mountPath: /etc/nginx/geoip}
  service:
    type: LoadBalancer
    loadBalancerClass: example.com/internal
    nodePorts:
    - {port: 30080, listenerPort: 80}
    - {port: 30999, listenerPort: 9999}
`

// TestPodShaping: NGINX Gateway Fabric's scheduling and pod-shaping
// settings reach the data plane's objects: affinity, node selector,
// tolerations and volumes on the pods; mounts, host ports, hooks and the
// probe's delay on the NGINX container and no other; the load balancer
// class and listener node ports on the Service; metrics on the
// autoscaler. The data plane's own volumes and mounts stay Gatewall's,
// and the seal changes with every one of them.
func TestPodShaping(t *testing.T) {
	p := params(decodeSpec(t, ngfPodShaping))
	p.ReadinessPort = 8081
	p.SealKey = make([]byte, podseal.KeySize)
	dep := find[*appsv1.Deployment](t, p)
	spec := dep.Spec.Template.Spec
	if spec.NodeSelector["kubernetes.io/os"] != "linux" || len(spec.NodeSelector) != 1 {
		t.Errorf("nodeSelector %v", spec.NodeSelector)
	}
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated" || spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations %+v", spec.Tolerations)
	}
	if a := spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("affinity %+v", a)
	}
	var geoip, token int
	for _, v := range spec.Volumes {
		switch v.Name {
		case "geoip":
			geoip++
		case "agent-token":
			token++
			if v.Projected == nil {
				t.Errorf("the agent-token volume is %+v, not the data plane's projected token", v.VolumeSource)
			}
		}
	}
	if geoip != 1 || token != 1 {
		t.Errorf("volumes geoip %d, agent-token %d; want one of each, the data plane's token its own", geoip, token)
	}
	nginx := spec.Containers[0]
	if !slices.ContainsFunc(nginx.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/usr/share/GeoIP" && m.ReadOnly }) {
		t.Errorf("NGINX mounts %+v lack /usr/share/GeoIP", nginx.VolumeMounts)
	}
	if slices.ContainsFunc(nginx.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/nginx/geoip" }) {
		t.Error("a mount inside /etc/nginx reached the NGINX container")
	}
	wantPorts := []corev1.ContainerPort{
		{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 443, HostPort: 8443, Protocol: corev1.ProtocolTCP},
	}
	var hostPorts []corev1.ContainerPort
	for _, cp := range nginx.Ports {
		if cp.HostPort != 0 {
			hostPorts = append(hostPorts, cp)
		}
	}
	if !equality.Semantic.DeepEqual(hostPorts, wantPorts) {
		t.Errorf("host ports %+v, want %+v", hostPorts, wantPorts)
	}
	if l := nginx.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds != 5 {
		t.Errorf("lifecycle %+v", l)
	}
	if r := nginx.ReadinessProbe; r == nil || r.InitialDelaySeconds != 4 || r.HTTPGet == nil || r.HTTPGet.Port.IntValue() != 8081 {
		t.Errorf("readiness probe %+v", r)
	}
	// The other containers keep the drain's pause (drain.go), not the
	// class's hook.
	for _, c := range spec.Containers[1:] {
		if !equality.Semantic.DeepEqual(c.Lifecycle, drainLifecycle(spec.TerminationGracePeriodSeconds)) || len(c.Ports) > 0 ||
			slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "geoip" }) {
			t.Errorf("container %s got the NGINX container's settings: %+v", c.Name, c)
		}
	}

	svc := find[*corev1.Service](t, p)
	if ptr.Deref(svc.Spec.LoadBalancerClass, "") != "example.com/internal" {
		t.Errorf("loadBalancerClass %v", svc.Spec.LoadBalancerClass)
	}
	for _, sp := range svc.Spec.Ports {
		want := int32(0)
		if sp.Port == 80 {
			want = 30080
		}
		if sp.NodePort != want {
			t.Errorf("Service port %d has node port %d, want %d", sp.Port, sp.NodePort, want)
		}
	}

	hpa := find[*autoscalingv2.HorizontalPodAutoscaler](t, p)
	if n := len(hpa.Spec.Metrics); n != 2 || hpa.Spec.Metrics[0].Resource == nil || hpa.Spec.Metrics[1].Pods == nil ||
		!hpa.Spec.Metrics[1].Pods.Target.AverageValue.Equal(resource.MustParse("100")) {
		t.Errorf("autoscaler metrics %+v, want the CPU target then the Pods metric", hpa.Spec.Metrics)
	}

	// Each setting that decides what runs or where is sealed.
	base := dep.Spec.Template.Annotations[podseal.Annotation]
	for name, change := range map[string]func(*v1alpha2.DeploymentSpec){
		"nodeSelector": func(d *v1alpha2.DeploymentSpec) { d.Pod.NodeSelector["kubernetes.io/os"] = "windows" },
		"tolerations":  func(d *v1alpha2.DeploymentSpec) { d.Pod.Tolerations[0].Value = "other" },
		"affinity": func(d *v1alpha2.DeploymentSpec) {
			d.Pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey = "zone"
		},
		"volumes":      func(d *v1alpha2.DeploymentSpec) { d.Pod.Volumes[0].ConfigMap.Name = "other" },
		"volumeMounts": func(d *v1alpha2.DeploymentSpec) { d.Container.VolumeMounts[0].MountPath = "/srv" },
		"hostPorts":    func(d *v1alpha2.DeploymentSpec) { d.Container.HostPorts[0].Port = 9443 },
		"lifecycle": func(d *v1alpha2.DeploymentSpec) {
			d.Container.Lifecycle.PreStop = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh"}}}
		},
	} {
		q := params(decodeSpec(t, ngfPodShaping))
		q.ReadinessPort, q.SealKey = p.ReadinessPort, p.SealKey
		change(q.NginxProxy.Kubernetes.Deployment)
		if got := find[*appsv1.Deployment](t, q).Spec.Template.Annotations[podseal.Annotation]; got == base {
			t.Errorf("changing %s leaves the seal as it was", name)
		}
	}
}
