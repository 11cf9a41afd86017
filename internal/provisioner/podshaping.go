package provisioner

import (
	"maps"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// shapePod puts NGINX Gateway Fabric's scheduling and pod-shaping
// settings of the workload d on the pod spec and its NGINX container
// (nginx, an element of spec.Containers): affinity, node selector,
// tolerations, the volumes and mounts the data plane takes
// (v1alpha2.UsableVolumes, UsableVolumeMounts: never one of its own),
// host ports, lifecycle hooks and the readiness probe's initial delay.
// Everything it sets is sealed (package podseal) and held by the
// manager-placement admission policy to what the installation allows.
func shapePod(d *v1alpha2.DeploymentSpec, spec *corev1.PodSpec, nginx *corev1.Container) {
	if d == nil {
		return
	}
	if p := d.Pod; p != nil {
		spec.Affinity = p.Affinity.DeepCopy()
		spec.NodeSelector = maps.Clone(p.NodeSelector)
		for _, t := range p.Tolerations {
			spec.Tolerations = append(spec.Tolerations, *t.DeepCopy())
		}
	}
	volumes, _ := v1alpha2.UsableVolumes(d.Pod)
	for _, v := range volumes {
		spec.Volumes = append(spec.Volumes, *v.DeepCopy())
	}
	c := d.Container
	if c == nil {
		return
	}
	mounts, _ := v1alpha2.UsableVolumeMounts(c, volumes)
	for _, m := range mounts {
		nginx.VolumeMounts = append(nginx.VolumeMounts, *m.DeepCopy())
	}
	for _, hp := range c.HostPorts {
		nginx.Ports = append(nginx.Ports, corev1.ContainerPort{ContainerPort: hp.ContainerPort, HostPort: hp.Port, Protocol: corev1.ProtocolTCP})
	}
	// By host port, so the template does not change with the list's order.
	slices.SortStableFunc(nginx.Ports, func(a, b corev1.ContainerPort) int { return int(a.HostPort - b.HostPort) })
	if c.Lifecycle != nil {
		// The class's hooks; its preStop replaces the drain's pause
		// (drain.go), which stays when it has none.
		l := c.Lifecycle.DeepCopy()
		if l.PreStop == nil && nginx.Lifecycle != nil {
			l.PreStop = nginx.Lifecycle.PreStop
		}
		nginx.Lifecycle = l
	}
	if r := c.ReadinessProbe; r != nil && r.InitialDelaySeconds != nil && nginx.ReadinessProbe != nil {
		nginx.ReadinessProbe.InitialDelaySeconds = *r.InitialDelaySeconds
	}
}

// extraMetrics are autoscaling.metrics, after the CPU and memory targets.
func extraMetrics(a *v1alpha2.AutoscalingSpec) []autoscalingv2.MetricSpec {
	var out []autoscalingv2.MetricSpec
	for _, m := range a.Metrics {
		out = append(out, *m.DeepCopy())
	}
	return out
}

// exposeService sets the Service's loadBalancerClass (a LoadBalancer's
// only) and the node port of each port whose number is a nodePorts
// listenerPort (TCP and UDP alike); the others' are the cluster's to
// choose.
func exposeService(svc *corev1.Service, s *v1alpha2.ServiceSpec) {
	if s.LoadBalancerClass != nil && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerClass = ptr.To(*s.LoadBalancerClass)
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		return
	}
	for i := range svc.Spec.Ports {
		for _, np := range s.NodePorts {
			if np.ListenerPort == svc.Spec.Ports[i].Port {
				svc.Spec.Ports[i].NodePort = np.Port
			}
		}
	}
}
