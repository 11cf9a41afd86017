package graph

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// EffectiveNginxProxy overlays the Gateway's NginxProxy spec on the
// GatewayClass's, field by field: a field set on the Gateway's wins, but
// allowGatewayOverrides is the class's alone. Either may be nil. The result
// is a new spec; the inputs are not modified. The Gateway's spec is what
// its class lets it set (allowedOverrides).
func EffectiveNginxProxy(class, gateway *v1alpha2.NginxProxySpec) *v1alpha2.NginxProxySpec {
	switch {
	case class == nil && gateway == nil:
		return &v1alpha2.NginxProxySpec{}
	case class == nil:
		out := gateway.DeepCopy()
		out.AllowGatewayOverrides = nil
		if out.Upstreams != nil {
			out.Upstreams.MaxRetries = lowest(nil, out.Upstreams.MaxRetries)
		}
		return out
	case gateway == nil:
		return class.DeepCopy()
	}
	out := class.DeepCopy()
	g := gateway.DeepCopy()
	if g.WAF != "" {
		out.WAF = g.WAF
	}
	out.IPFamily = pick(g.IPFamily, out.IPFamily)
	out.WorkerConnections = pick(g.WorkerConnections, out.WorkerConnections)
	out.Logging = overlayLogging(out.Logging, g.Logging)
	overlayNginx(out, g)
	if g.Metrics != nil {
		if out.Metrics == nil {
			out.Metrics = &v1alpha2.Metrics{}
		}
		out.Metrics.Port = pick(g.Metrics.Port, out.Metrics.Port)
		out.Metrics.Disable = pick(g.Metrics.Disable, out.Metrics.Disable)
	}
	if g.Upstreams != nil {
		if out.Upstreams == nil {
			out.Upstreams = &v1alpha2.Upstreams{}
		}
		out.Upstreams.ConnectTimeout = pick(g.Upstreams.ConnectTimeout, out.Upstreams.ConnectTimeout)
		out.Upstreams.MaxTries = pick(g.Upstreams.MaxTries, out.Upstreams.MaxTries)
		// The class's bound on retries is the most a Gateway may have.
		out.Upstreams.MaxRetries = lowest(out.Upstreams.MaxRetries, g.Upstreams.MaxRetries)
		out.Upstreams.FailTimeout = pick(g.Upstreams.FailTimeout, out.Upstreams.FailTimeout)
	}
	if g.L4 != nil {
		if out.L4 == nil {
			out.L4 = &v1alpha2.L4Listeners{}
		}
		out.L4.MaxConnections = pick(g.L4.MaxConnections, out.L4.MaxConnections)
		out.L4.TCPIdleTimeout = pick(g.L4.TCPIdleTimeout, out.L4.TCPIdleTimeout)
		out.L4.UDPSessionTimeout = pick(g.L4.UDPSessionTimeout, out.L4.UDPSessionTimeout)
	}
	out.WorkerShutdownTimeout = pick(g.WorkerShutdownTimeout, out.WorkerShutdownTimeout)
	if g.DNSResolver != nil {
		// The Gateway's servers replace the class's (a list is one
		// setting); its other fields overlay the class's one by one.
		if out.DNSResolver == nil {
			out.DNSResolver = &v1alpha2.DNSResolver{}
		}
		out.DNSResolver.Addresses = g.DNSResolver.Addresses
		out.DNSResolver.Timeout = pick(g.DNSResolver.Timeout, out.DNSResolver.Timeout)
		out.DNSResolver.CacheTTL = pick(g.DNSResolver.CacheTTL, out.DNSResolver.CacheTTL)
		out.DNSResolver.DisableIPv6 = pick(g.DNSResolver.DisableIPv6, out.DNSResolver.DisableIPv6)
	}
	if g.Kubernetes != nil {
		if out.Kubernetes == nil {
			out.Kubernetes = &v1alpha2.KubernetesSpec{}
		}
		out.Kubernetes.Deployment, out.Kubernetes.DaemonSet = overlayWorkload(out.Kubernetes, g.Kubernetes)
		out.Kubernetes.Service = overlayService(out.Kubernetes.Service, g.Kubernetes.Service)
	}
	return out
}

// lowest is a Gateway's bound on retries within its class's, whose unset
// bound is the default one.
func lowest(class, gateway *int32) *int32 {
	if gateway == nil {
		return class
	}
	return ptr.To(min(ptr.Deref(class, v1alpha2.DefaultMaxRetries), *gateway))
}

func pick[T any](override, base *T) *T {
	if override != nil {
		return override
	}
	return base
}

// overlayWorkload overlays the Gateway's workload on the class's. The
// Gateway's kind wins (a DaemonSet or a Deployment, as it may choose its
// replicas); the pod settings the two kinds share overlay the class's
// whatever the kinds, so that a Gateway that changes the kind keeps what
// its class chose of them (its images, say: allowedOverrides); a
// Deployment's own settings (replicas, autoscaling, disruption budget) go
// with the Deployment. One of the results is nil.
func overlayWorkload(base, over *v1alpha2.KubernetesSpec) (*v1alpha2.DeploymentSpec, *v1alpha2.DaemonSetSpec) {
	daemon := over.DaemonSet != nil || over.Deployment == nil && base.DaemonSet != nil
	if !daemon {
		if base.DaemonSet != nil {
			return overlayDeployment(workloadOf(base), over.Deployment), nil
		}
		return overlayDeployment(base.Deployment, over.Deployment), nil
	}
	d := overlayDeployment(workloadOf(base), workloadOf(over))
	if d == nil {
		return nil, &v1alpha2.DaemonSetSpec{}
	}
	return nil, &v1alpha2.DaemonSetSpec{Container: d.Container, Endpoints: d.Endpoints, WAFContainers: d.WAFContainers, Pod: d.Pod, Patches: d.Patches}
}

// workloadOf is the pod settings of k's workload, without a Deployment's
// own (nil when k sets no workload).
func workloadOf(k *v1alpha2.KubernetesSpec) *v1alpha2.DeploymentSpec {
	w := (&v1alpha2.NginxProxySpec{Kubernetes: k}).Workload()
	if w == nil {
		return nil
	}
	return &v1alpha2.DeploymentSpec{Container: w.Container, Endpoints: w.Endpoints, WAFContainers: w.WAFContainers, Pod: w.Pod, Patches: w.Patches}
}

func overlayDeployment(base, over *v1alpha2.DeploymentSpec) *v1alpha2.DeploymentSpec {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	base.Replicas = pick(over.Replicas, base.Replicas)
	// Each replaces the class's whole: a Gateway's autoscaler or budget is
	// one setting, whose parts only make sense together.
	base.Autoscaling = pick(over.Autoscaling, base.Autoscaling)
	base.PodDisruptionBudget = pick(over.PodDisruptionBudget, base.PodDisruptionBudget)
	base.Container = overlayContainer(base.Container, over.Container)
	if over.Endpoints != nil {
		if base.Endpoints == nil {
			base.Endpoints = &v1alpha2.EndpointsContainer{}
		}
		base.Endpoints.Resources = pick(over.Endpoints.Resources, base.Endpoints.Resources)
	}
	base.Pod = overlayPod(base.Pod, over.Pod)
	// The Gateway's patches, when its class lets it set them, replace the
	// class's: they are one setting, applied in order.
	if over.Patches != nil {
		base.Patches = over.Patches
	}
	if over.WAFContainers != nil {
		if base.WAFContainers == nil {
			base.WAFContainers = &v1alpha2.WAFContainers{}
		}
		base.WAFContainers.Enforcer = overlayContainer(base.WAFContainers.Enforcer, over.WAFContainers.Enforcer)
		base.WAFContainers.ConfigManager = overlayContainer(base.WAFContainers.ConfigManager, over.WAFContainers.ConfigManager)
	}
	return base
}

// overlayPod overlays the Gateway's pod settings field by field; its pull
// Secrets and spread constraints, when set, replace the class's lists.
func overlayPod(base, over *v1alpha2.PodSpec) *v1alpha2.PodSpec {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	if over.ImagePullSecrets != nil {
		base.ImagePullSecrets = over.ImagePullSecrets
	}
	base.TerminationGracePeriodSeconds = pick(over.TerminationGracePeriodSeconds, base.TerminationGracePeriodSeconds)
	// The Gateway's constraints, a list of one setting, replace the class's.
	if over.TopologySpreadConstraints != nil {
		base.TopologySpreadConstraints = over.TopologySpreadConstraints
	}
	// Placement and volumes, when the class lets the Gateway set them
	// (allowedOverrides), replace the class's whole: an affinity, a node
	// selector, a list of tolerations or volumes is one setting.
	base.Affinity = pick(over.Affinity, base.Affinity)
	if over.NodeSelector != nil {
		base.NodeSelector = over.NodeSelector
	}
	if over.Tolerations != nil {
		base.Tolerations = over.Tolerations
	}
	if over.Volumes != nil {
		base.Volumes = over.Volumes
	}
	return base
}

func overlayContainer(base, over *v1alpha2.ContainerSpec) *v1alpha2.ContainerSpec {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	if over.Image != nil {
		if base.Image == nil {
			base.Image = &v1alpha2.Image{}
		}
		base.Image.Repository = pick(over.Image.Repository, base.Image.Repository)
		base.Image.Tag = pick(over.Image.Tag, base.Image.Tag)
		base.Image.PullPolicy = pick(over.Image.PullPolicy, base.Image.PullPolicy)
	}
	base.Resources = pick(over.Resources, base.Resources)
	// Each replaces the class's whole.
	base.Lifecycle = pick(over.Lifecycle, base.Lifecycle)
	base.ReadinessProbe = pick(over.ReadinessProbe, base.ReadinessProbe)
	if over.HostPorts != nil {
		base.HostPorts = over.HostPorts
	}
	if over.VolumeMounts != nil {
		base.VolumeMounts = over.VolumeMounts
	}
	return base
}

func overlayService(base, over *v1alpha2.ServiceSpec) *v1alpha2.ServiceSpec {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	base.Type = pick(over.Type, base.Type)
	base.ExternalTrafficPolicy = pick(over.ExternalTrafficPolicy, base.ExternalTrafficPolicy)
	base.LoadBalancerIP = pick(over.LoadBalancerIP, base.LoadBalancerIP)
	if over.LoadBalancerSourceRanges != nil {
		base.LoadBalancerSourceRanges = over.LoadBalancerSourceRanges
	}
	base.LoadBalancerClass = pick(over.LoadBalancerClass, base.LoadBalancerClass)
	if over.Patches != nil {
		base.Patches = over.Patches
	}
	if over.NodePorts != nil {
		base.NodePorts = over.NodePorts
	}
	return base
}

// specOf is the spec of an NginxProxy that may be nil.
func specOf(np *v1alpha2.NginxProxy) *v1alpha2.NginxProxySpec {
	if np == nil {
		return nil
	}
	return &np.Spec
}

// checkOverlay re-validates the effective spec eff of a Gateway whose class
// and Gateway both name an NginxProxy. Each is valid alone (lookupNginxProxy
// checked it), but fields from the two can combine into settings neither
// allows: a ClusterIP Service from one with loadBalancerSourceRanges or an
// externalTrafficPolicy from the other, or an ipFamily that does not match
// the other's loadBalancerIP. It returns why the combination is invalid,
// naming both NginxProxies, or "" when it is valid.
func checkOverlay(class, gateway *v1alpha2.NginxProxy, eff *v1alpha2.NginxProxySpec) string {
	if class == nil || gateway == nil {
		return ""
	}
	errs := validation.NginxProxy(&v1alpha2.NginxProxy{Spec: *eff})
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("the Gateway's NginxProxy %s/%s overlaid on the GatewayClass's NginxProxy %s/%s gives invalid settings: %s",
		gateway.Namespace, gateway.Name, class.Namespace, class.Name, errs.ToAggregate())
}
