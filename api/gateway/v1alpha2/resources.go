package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The data-plane containers' default compute resources, from what they
// were measured to use (docs/budgets.md):
//
//   - NGINX and nginx-agent: a Gateway of 5,000 routes holds 562 MiB with
//     2 workers, 1,425 MiB while a reload's old workers finish; with the
//     agent (60 MiB), Gatewall's Lua dictionaries (48 MiB) and every
//     budget full (256 MiB of policy zones, 128 MiB of body buffers per
//     worker), 2,045 MiB; the limit adds a fifth. The CPU limit bounds
//     the workers, and so the memory.
//   - The CPU requests are small (50m for NGINX): a request reserves a
//     node's CPU whether the data plane uses it or not, and a node of
//     2 CPUs must hold a Gateway per test of the conformance suite (about
//     18 at once: 100m each left pods Pending for "Insufficient cpu").
//     Set them from the traffic a Gateway serves.
//   - endpoints: 21 MiB with 5,000 upstreams of 2 endpoints, 46 MiB with
//     100,000 endpoints.
//   - WAF: F5's containers cannot run here; requests only.
var (
	defaultNGINXResources     = resources("50m", "256Mi", "2", "2560Mi")
	defaultEndpointsResources = resources("10m", "32Mi", "500m", "128Mi")
	defaultWAFResources       = resources("100m", "256Mi", "", "")
)

func resources(cpu, memory, cpuLimit, memoryLimit string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}
	if cpuLimit != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memoryLimit)}
	}
	return r
}

// NGINXResources are the NGINX container's resources: the NginxProxy's,
// or Gatewall's defaults when it sets none.
func (s *NginxProxySpec) NGINXResources() corev1.ResourceRequirements {
	if d := s.deployment(); d != nil && d.Container != nil && d.Container.Resources != nil {
		return *d.Container.Resources.DeepCopy()
	}
	return *defaultNGINXResources.DeepCopy()
}

// EndpointsResources are the endpoints container's resources.
func (s *NginxProxySpec) EndpointsResources() corev1.ResourceRequirements {
	if d := s.deployment(); d != nil && d.Endpoints != nil && d.Endpoints.Resources != nil {
		return *d.Endpoints.Resources.DeepCopy()
	}
	return *defaultEndpointsResources.DeepCopy()
}

// WAFResources are the resources of a WAF container configured by c
// (nil: not configured).
func WAFResources(c *ContainerSpec) corev1.ResourceRequirements {
	if c != nil && c.Resources != nil {
		return *c.Resources.DeepCopy()
	}
	return *defaultWAFResources.DeepCopy()
}

// Workers is how many worker processes NGINX runs: workerProcesses when
// set, else one per CPU of the NGINX container's limit, rounded up; 0
// when it has no CPU limit (NGINX then runs one per CPU of the node,
// which Gatewall cannot know).
func (s *NginxProxySpec) Workers() int32 {
	if s != nil && s.WorkerProcesses != nil {
		return *s.WorkerProcesses
	}
	cpu, ok := s.NGINXResources().Limits[corev1.ResourceCPU]
	if !ok || cpu.Sign() <= 0 {
		return 0
	}
	n := (cpu.MilliValue() + 999) / 1000
	return int32(min(n, maxWorkerProcesses))
}

// maxWorkerProcesses bounds the workers a CPU limit gives, far above any
// node's CPUs.
const maxWorkerProcesses = 1024

func (s *NginxProxySpec) deployment() *DeploymentSpec { return s.Workload() }

// Workload is the data plane's workload, a Deployment's or a DaemonSet's,
// as a DeploymentSpec: a DaemonSet's settings are those of a Deployment's
// pods (nil when neither is set).
func (s *NginxProxySpec) Workload() *DeploymentSpec {
	if s == nil || s.Kubernetes == nil {
		return nil
	}
	if ds := s.Kubernetes.DaemonSet; ds != nil {
		return &DeploymentSpec{Container: ds.Container, Endpoints: ds.Endpoints, WAFContainers: ds.WAFContainers, Pod: ds.Pod, Patches: ds.Patches}
	}
	return s.Kubernetes.Deployment
}

// workerFiles are the files an NGINX worker keeps open besides its
// connections and their temporary files: logs, its event queue, modules'
// files.
const workerFiles = 64

// FilesForConnections is how many files an NGINX worker with
// workerConnections connections may need: every connection is a file,
// and a buffered request or response one more (a temporary file), so
// twice the connections, and workerFiles.
func FilesForConnections(workerConnections int32) int32 { return 2*workerConnections + workerFiles }

// EffectiveWorkerConnections is workerConnections, or its default.
func (s *NginxProxySpec) EffectiveWorkerConnections() int32 {
	if s != nil && s.WorkerConnections != nil {
		return *s.WorkerConnections
	}
	return DefaultWorkerConnections
}

// IsDaemonSet says whether the data plane runs as a DaemonSet.
func (s *NginxProxySpec) IsDaemonSet() bool {
	return s != nil && s.Kubernetes != nil && s.Kubernetes.DaemonSet != nil
}
