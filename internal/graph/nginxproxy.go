package graph

import (
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// EffectiveNginxProxy overlays the Gateway's NginxProxy spec on the
// GatewayClass's, field by field: a field set on the Gateway's wins. Either
// may be nil. The result is a new spec; the inputs are not modified.
func EffectiveNginxProxy(class, gateway *v1alpha2.NginxProxySpec) *v1alpha2.NginxProxySpec {
	switch {
	case class == nil && gateway == nil:
		return &v1alpha2.NginxProxySpec{}
	case class == nil:
		return gateway.DeepCopy()
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
	if g.Logging != nil {
		if out.Logging == nil {
			out.Logging = &v1alpha2.NginxLogging{}
		}
		out.Logging.ErrorLevel = pick(g.Logging.ErrorLevel, out.Logging.ErrorLevel)
		out.Logging.AgentLevel = pick(g.Logging.AgentLevel, out.Logging.AgentLevel)
	}
	if g.Kubernetes != nil {
		if out.Kubernetes == nil {
			out.Kubernetes = &v1alpha2.KubernetesSpec{}
		}
		out.Kubernetes.Deployment = overlayDeployment(out.Kubernetes.Deployment, g.Kubernetes.Deployment)
		out.Kubernetes.Service = overlayService(out.Kubernetes.Service, g.Kubernetes.Service)
	}
	return out
}

func pick[T any](override, base *T) *T {
	if override != nil {
		return override
	}
	return base
}

func overlayDeployment(base, over *v1alpha2.DeploymentSpec) *v1alpha2.DeploymentSpec {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	base.Replicas = pick(over.Replicas, base.Replicas)
	base.Container = overlayContainer(base.Container, over.Container)
	if over.WAFContainers != nil {
		if base.WAFContainers == nil {
			base.WAFContainers = &v1alpha2.WAFContainers{}
		}
		base.WAFContainers.Enforcer = overlayContainer(base.WAFContainers.Enforcer, over.WAFContainers.Enforcer)
		base.WAFContainers.ConfigManager = overlayContainer(base.WAFContainers.ConfigManager, over.WAFContainers.ConfigManager)
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
	return base
}
