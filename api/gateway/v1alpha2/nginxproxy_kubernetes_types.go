package v1alpha2

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// KubernetesSpec configures the Kubernetes objects of a Gateway's data plane.
//
// +kubebuilder:validation:XValidation:message="only one of deployment or daemonSet can be set",rule="!(has(self.deployment) && has(self.daemonSet))"
type KubernetesSpec struct {
	// Deployment configures the data-plane Deployment, the default.
	// +optional
	Deployment *DeploymentSpec `json:"deployment,omitempty"`

	// DaemonSet runs the data plane as a DaemonSet instead of a
	// Deployment: one pod on every node the scheduler may place it on.
	// Switching between the two replaces one with the other at once: the
	// old pods stop while the new ones start, so a switch can cost
	// connections. NGINX Gateway Fabric's field.
	// +optional
	DaemonSet *DaemonSetSpec `json:"daemonSet,omitempty"`

	// Service configures the Service in front of the data plane.
	// +optional
	Service *ServiceSpec `json:"service,omitempty"`
}

// DeploymentSpec configures the data-plane Deployment.
type DeploymentSpec struct {
	// Replicas is the number of data-plane pods. Defaults to 1. With
	// autoscaling enabled the HorizontalPodAutoscaler chooses the number
	// and replicas is not used.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// Autoscaling makes Gatewall create a HorizontalPodAutoscaler
	// (autoscaling/v2) for the data-plane Deployment, owned by the Gateway
	// like the Deployment; the Deployment's replicas are then the
	// autoscaler's to set. The metrics the targets name come from the
	// cluster's resource metrics API (metrics-server): without it, the
	// autoscaler holds the replicas it has. NGINX Gateway Fabric's field.
	//
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// PodDisruptionBudget makes Gatewall create a PodDisruptionBudget for
	// the data-plane pods, owned by the Gateway like the Deployment: how
	// many pods a voluntary eviction (a node drain) must leave. NGINX
	// Gateway Fabric's field.
	//
	// +optional
	PodDisruptionBudget *PodDisruptionBudgetSpec `json:"podDisruptionBudget,omitempty"`

	// Container configures the NGINX container, which also runs nginx-agent.
	// Its resources default to requests of 50m CPU and 256Mi of memory and
	// limits of 2 CPUs and 2560Mi (docs/budgets.md says why); NGINX runs
	// one worker process per CPU of the limit (rounded up), or one per CPU
	// of the node without a CPU limit. Resources set here replace the
	// defaults whole.
	// +optional
	Container *ContainerSpec `json:"container,omitempty"`

	// Endpoints configures the endpoints container, which takes the
	// Gateway's endpoints from Gatewall and hands them to NGINX without a
	// reload. It runs the NGINX container's image.
	// +optional
	Endpoints *EndpointsContainer `json:"endpoints,omitempty"`

	// WAFContainers configures the containers added when waf is enabled.
	// Their resources default to requests only (100m CPU and 256Mi of
	// memory each): F5's containers could not be measured to choose limits.
	// +optional
	WAFContainers *WAFContainers `json:"wafContainers,omitempty"`

	// Pod configures the data-plane pods (the shape of NGINX Gateway
	// Fabric's deployment.pod).
	// +optional
	Pod *PodSpec `json:"pod,omitempty"`
	// Patches change the data plane's Deployment after Gatewall makes it, in
	// order: at most 8. Class level unless the class lists Patches in
	// allowGatewayOverrides; a patch of what the data plane's identity and
	// protection rest on is not applied (Patch). NGINX Gateway Fabric's
	// field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Patches []Patch `json:"patches,omitempty"`
}

// DaemonSetSpec configures the data-plane DaemonSet: its pods' settings
// are a Deployment's.
type DaemonSetSpec struct {
	// Container configures the NGINX container, as in a Deployment.
	// +optional
	Container *ContainerSpec `json:"container,omitempty"`

	// Endpoints configures the endpoints container, as in a Deployment.
	// +optional
	Endpoints *EndpointsContainer `json:"endpoints,omitempty"`

	// WAFContainers configures the containers added when waf is enabled,
	// as in a Deployment.
	// +optional
	WAFContainers *WAFContainers `json:"wafContainers,omitempty"`

	// Pod configures the data-plane pods, as in a Deployment.
	// +optional
	Pod *PodSpec `json:"pod,omitempty"`
	// Patches change the data plane's DaemonSet after Gatewall makes it, in
	// order: at most 8. Class level unless the class lists Patches in
	// allowGatewayOverrides; a patch of what the data plane's identity and
	// protection rest on is not applied (Patch). NGINX Gateway Fabric's
	// field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Patches []Patch `json:"patches,omitempty"`
}

// PodSpec configures the data-plane pods.
type PodSpec struct {
	// ImagePullSecrets are Secrets of the Gateway's namespace that hold
	// credentials for the registries of the data-plane images (F5's private
	// registry for App Protect's, say), as in a Pod's imagePullSecrets.
	// They come in addition to the copies of the Secrets the manager's
	// --nginx-docker-secret names. A Gateway's NginxProxy that sets them
	// replaces its GatewayClass's list.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	ImagePullSecrets []LocalSecretReference `json:"imagePullSecrets,omitempty"`

	// TerminationGracePeriodSeconds is how long a data-plane pod that is
	// stopped (a rollout, a scale-in, a drain) has before its processes are
	// killed: 0 to 3600 seconds. Its containers first pause 10 seconds (or
	// the whole grace when shorter) while load balancers stop sending the
	// pod connections, then NGINX's workers finish their requests for up to
	// workerShutdownTimeout: keep this longer than both. By default, the
	// pause, workerShutdownTimeout and 5 seconds (75 with the default
	// workerShutdownTimeout). NGINX Gateway Fabric's field.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// TopologySpreadConstraints spread the data-plane pods across
	// topology domains (zones, nodes), as a Pod's. Each spreads the pods of
	// this Gateway's data plane: Gatewall sets the label selector to them
	// (NGINX Gateway Fabric's field takes a labelSelector, which here would
	// only select other pods, and matchLabelKeys; both are left out). At
	// most 8, one per topologyKey and whenUnsatisfiable.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:message="each topologyKey and whenUnsatisfiable pair can appear once",rule="self.all(c, self.exists_one(d, d.topologyKey == c.topologyKey && d.whenUnsatisfiable == c.whenUnsatisfiable))"
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// Affinity is the pods' node and pod affinity and anti-affinity, as a
	// Pod's. It chooses the nodes that run pods holding every key the
	// Gateway serves: a Gateway's own NginxProxy sets it only if its
	// class lists Scheduling in allowGatewayOverrides, and the manager's
	// admission policy (manager-placement) refuses it until the installation
	// allows it (docs/security.md). NGINX Gateway Fabric's field.
	//
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// NodeSelector are node labels a node must have to run the pods, as a
	// Pod's: at most 32. Class level, as affinity. The API server checks
	// the keys and values when the data plane is applied (a refusal is in
	// the Gateway's status). NGINX Gateway Fabric's field.
	//
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods run on nodes with matching taints, as a
	// Pod's: at most 32. Class level, as affinity. NGINX Gateway
	// Fabric's field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:message="a toleration's operator is Exists or Equal, its effect NoSchedule, PreferNoSchedule or NoExecute",rule="self.all(t, (!has(t.operator) || t.operator in ['Exists', 'Equal']) && (!has(t.effect) || t.effect in ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']))"
	// +kubebuilder:validation:XValidation:message="a toleration without a key must have operator Exists, and one with operator Exists no value",rule="self.all(t, (has(t.key) && t.key != '' || has(t.operator) && t.operator == 'Exists') && !(has(t.operator) && t.operator == 'Exists' && has(t.value) && t.value != ''))"
	// +kubebuilder:validation:XValidation:message="tolerationSeconds can only be set with effect NoExecute",rule="self.all(t, !has(t.tolerationSeconds) || has(t.effect) && t.effect == 'NoExecute')"
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Volumes are volumes the NGINX container may mount (its
	// volumeMounts), as a Pod's: at most 16. One named as a volume of the
	// data plane's own (nginx-conf, agent-token, ...: ReservedVolumeNames)
	// is left out, and the status says so. A volume can reach the node (hostPath) or
	// other Secrets of the namespace: class level unless the class lists
	// Volumes in allowGatewayOverrides, and refused by the manager's
	// admission policy until the installation allows it
	// (docs/security.md). NGINX Gateway Fabric's field.
	//
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Volumes []corev1.Volume `json:"volumes,omitempty"`
}

// TopologySpreadConstraint is a Pod's topology spread constraint without
// its label selector (the data-plane pods') and matchLabelKeys.
//
// +kubebuilder:validation:XValidation:message="minDomains can only be set when whenUnsatisfiable is DoNotSchedule",rule="!has(self.minDomains) || self.whenUnsatisfiable == 'DoNotSchedule'"
type TopologySpreadConstraint struct {
	// MaxSkew is how much the number of pods may differ between two
	// domains.
	//
	// +kubebuilder:validation:Minimum=1
	MaxSkew int32 `json:"maxSkew"`

	// TopologyKey is the node label whose values are the domains
	// (topology.kubernetes.io/zone, kubernetes.io/hostname).
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	TopologyKey string `json:"topologyKey"`

	// WhenUnsatisfiable is DoNotSchedule (leave a pod pending) or
	// ScheduleAnyway (prefer the domains that reduce the skew).
	//
	// +kubebuilder:validation:Enum=DoNotSchedule;ScheduleAnyway
	WhenUnsatisfiable corev1.UnsatisfiableConstraintAction `json:"whenUnsatisfiable"`

	// MinDomains is the fewest domains the pods count as spread over;
	// only with DoNotSchedule.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinDomains *int32 `json:"minDomains,omitempty"`

	// NodeAffinityPolicy says whether the pods' node affinity and node
	// selector decide which nodes count: Honor (the default) or Ignore.
	//
	// +optional
	// +kubebuilder:validation:Enum=Honor;Ignore
	NodeAffinityPolicy *corev1.NodeInclusionPolicy `json:"nodeAffinityPolicy,omitempty"`

	// NodeTaintsPolicy says whether node taints decide which nodes count:
	// Honor or Ignore (the default).
	//
	// +optional
	// +kubebuilder:validation:Enum=Honor;Ignore
	NodeTaintsPolicy *corev1.NodeInclusionPolicy `json:"nodeTaintsPolicy,omitempty"`
}

// LocalSecretReference names a Secret in the same namespace.
type LocalSecretReference struct {
	// Name is the Secret's name.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// EndpointsContainer configures the endpoints container of a data-plane pod.
type EndpointsContainer struct {
	// Resources are the container's compute resource requests and limits.
	// They default to requests of 10m CPU and 32Mi of memory and limits of
	// 500m CPU and 128Mi (docs/budgets.md says why); resources set here
	// replace the defaults whole.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// WAFContainers configures the WAF containers of a data-plane pod: their
// images and resources.
//
// +kubebuilder:validation:XValidation:message="the WAF containers take an image and resources only",rule="(!has(self.enforcer) || !has(self.enforcer.lifecycle) && !has(self.enforcer.readinessProbe) && !has(self.enforcer.hostPorts) && !has(self.enforcer.volumeMounts)) && (!has(self.configManager) || !has(self.configManager.lifecycle) && !has(self.configManager.readinessProbe) && !has(self.configManager.hostPorts) && !has(self.configManager.volumeMounts))"
type WAFContainers struct {
	// Enforcer configures the waf-enforcer container.
	// +optional
	Enforcer *ContainerSpec `json:"enforcer,omitempty"`

	// ConfigManager configures the waf-config-mgr container.
	// +optional
	ConfigManager *ContainerSpec `json:"configManager,omitempty"`
}

// ContainerSpec configures one container. Lifecycle, readinessProbe,
// hostPorts and volumeMounts are the NGINX container's only (the WAF
// containers refuse them).
type ContainerSpec struct {
	// Image is the container image. Unset parts keep Gatewall's defaults.
	// +optional
	Image *Image `json:"image,omitempty"`

	// Resources are the container's compute resource requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Lifecycle are the NGINX container's postStart and preStop hooks, as
	// a Container's. An exec hook runs a command in the container that
	// holds every key the Gateway serves: class level unless the class
	// lists Lifecycle in allowGatewayOverrides. Each hook has exactly one
	// action; exec needs a command; stopSignal is not served (a pod needs
	// spec.os for it). NGINX Gateway Fabric's field.
	//
	// +optional
	// +kubebuilder:validation:XValidation:message="a lifecycle hook has exactly one of exec, httpGet, tcpSocket or sleep",rule="(!has(self.postStart) || [has(self.postStart.exec), has(self.postStart.httpGet), has(self.postStart.tcpSocket), has(self.postStart.sleep)].filter(x, x).size() == 1) && (!has(self.preStop) || [has(self.preStop.exec), has(self.preStop.httpGet), has(self.preStop.tcpSocket), has(self.preStop.sleep)].filter(x, x).size() == 1)"
	// +kubebuilder:validation:XValidation:message="an exec hook needs a command, and a sleep at least 1 second",rule="(!has(self.postStart) || (!has(self.postStart.exec) || has(self.postStart.exec.command) && size(self.postStart.exec.command) > 0) && (!has(self.postStart.sleep) || self.postStart.sleep.seconds >= 1)) && (!has(self.preStop) || (!has(self.preStop.exec) || has(self.preStop.exec.command) && size(self.preStop.exec.command) > 0) && (!has(self.preStop.sleep) || self.preStop.sleep.seconds >= 1))"
	// +kubebuilder:validation:XValidation:message="stopSignal is not served",rule="!has(self.stopSignal)"
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`

	// ReadinessProbe tunes the NGINX container's readiness probe. NGINX
	// Gateway Fabric's field.
	//
	// +optional
	ReadinessProbe *ReadinessProbeSpec `json:"readinessProbe,omitempty"`

	// HostPorts bind ports of every node that runs a data-plane pod to
	// the NGINX container's ports: at most 16, each host port once. They
	// reach the node: class level unless the class lists HostPorts in
	// allowGatewayOverrides, and refused by the manager's admission policy
	// until the installation allows them. NGINX Gateway Fabric's field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:message="each host port can appear once",rule="self.all(p, self.exists_one(q, q.port == p.port))"
	HostPorts []HostPort `json:"hostPorts,omitempty"`

	// VolumeMounts mount the pod's volumes (pod.volumes) in the NGINX
	// container: at most 16, each path once. A mount inside or over one of
	// the data plane's own directories (/etc/nginx, the agent's token and
	// CA, ...: ReservedMountPaths), of a volume pod.volumes does not have,
	// or with Bidirectional propagation is left out, and the status says
	// so. Class level, as volumes. NGINX Gateway Fabric's field.
	//
	// +optional
	// +listType=map
	// +listMapKey=mountPath
	// +kubebuilder:validation:MaxItems=16
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// Image is a container image reference.
type Image struct {
	// Repository is the image repository, e.g. ghcr.io/gatewall/dataplane.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9._]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*$`
	Repository *string `json:"repository,omitempty"`

	// Tag is the image tag, e.g. 1.0.0.
	//
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	Tag *string `json:"tag,omitempty"`

	// PullPolicy is the image pull policy: Always, IfNotPresent or Never.
	//
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	PullPolicy *corev1.PullPolicy `json:"pullPolicy,omitempty"`
}

// ServiceSpec configures the Service in front of the data plane.
//
// +kubebuilder:validation:XValidation:message="loadBalancerIP can only be set when type is LoadBalancer",rule="!has(self.loadBalancerIP) || !has(self.type) || self.type == 'LoadBalancer'"
// +kubebuilder:validation:XValidation:message="loadBalancerSourceRanges can only be set when type is LoadBalancer",rule="!has(self.loadBalancerSourceRanges) || !has(self.type) || self.type == 'LoadBalancer'"
// +kubebuilder:validation:XValidation:message="externalTrafficPolicy can only be set when type is NodePort or LoadBalancer",rule="!has(self.externalTrafficPolicy) || !has(self.type) || self.type != 'ClusterIP'"
// +kubebuilder:validation:XValidation:message="loadBalancerClass can only be set when type is LoadBalancer",rule="!has(self.loadBalancerClass) || !has(self.type) || self.type == 'LoadBalancer'"
// +kubebuilder:validation:XValidation:message="nodePorts can only be set when type is NodePort or LoadBalancer",rule="!has(self.nodePorts) || !has(self.type) || self.type != 'ClusterIP'"
type ServiceSpec struct {
	// Type is the Service type: ClusterIP, NodePort or LoadBalancer (default).
	//
	// +optional
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	Type *corev1.ServiceType `json:"type,omitempty"`

	// ExternalTrafficPolicy is Cluster or Local; Local keeps the client's source
	// address. Only for NodePort and LoadBalancer Services.
	//
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// LoadBalancerIP asks the load balancer for this IP address. Only for
	// LoadBalancer Services.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:message="loadBalancerIP must be an IP address",rule="isIP(self)"
	LoadBalancerIP *string `json:"loadBalancerIP,omitempty"`

	// LoadBalancerSourceRanges are the client CIDRs the load balancer lets in.
	// Only for LoadBalancer Services.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=49
	// +kubebuilder:validation:XValidation:message="loadBalancerSourceRanges must be CIDRs",rule="self.all(r, isCIDR(r))"
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`

	// LoadBalancerClass chooses the load balancer implementation of the
	// Service (a label-key-like name, example.com/internal). Only for
	// LoadBalancer Services; Kubernetes does not let it change once set
	// (the Service's apply is refused, and the Gateway says so). NGINX
	// Gateway Fabric's field.
	//
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`

	// NodePorts choose the node port of listener ports: at most 64, each
	// port and listener port once. A listener port no listener of the
	// Gateway has is not used. Only for NodePort and LoadBalancer
	// Services; the cluster's node port range (30000-32767 by default)
	// bounds them. NGINX Gateway Fabric's field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:message="each port and each listenerPort can appear once",rule="self.all(p, self.exists_one(q, q.port == p.port) && self.exists_one(q, q.listenerPort == p.listenerPort))"
	NodePorts []NodePort `json:"nodePorts,omitempty"`
	// Patches change the data plane's Service after Gatewall makes it, in
	// order: at most 8. Class level unless the class lists Patches in
	// allowGatewayOverrides; a patch of what the data plane's identity and
	// protection rest on is not applied (Patch). NGINX Gateway Fabric's
	// field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Patches []Patch `json:"patches,omitempty"`
}

// AutoscalingSpec configures the data plane's HorizontalPodAutoscaler
// (NGINX Gateway Fabric's shape).
//
// +kubebuilder:validation:XValidation:message="minReplicas must be less than or equal to maxReplicas",rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas"
type AutoscalingSpec struct {
	// Enable creates the HorizontalPodAutoscaler; false removes it, and
	// replicas applies again.
	Enable bool `json:"enable"`

	// MinReplicas is the fewest pods the autoscaler keeps. Defaults to 1.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods the autoscaler runs: at most 1000, the
	// bound of replicas.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilizationPercentage is the pods' average CPU use the
	// autoscaler aims at, in percent of their CPU requests.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// TargetMemoryUtilizationPercentage is the pods' average memory use the
	// autoscaler aims at, in percent of their memory requests.
	//
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`

	// Metrics are more metrics the autoscaler scales on, as a
	// HorizontalPodAutoscaler's (autoscaling/v2): at most 8, each with the
	// member its type names and no other. They come after the CPU and
	// memory targets. NGINX Gateway Fabric's field.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:message="a metric's type is Resource, Pods, Object, External or ContainerResource, and it sets that member only",rule="self.all(m, m.type in ['Resource', 'Pods', 'Object', 'External', 'ContainerResource'] && has(m.resource) == (m.type == 'Resource') && has(m.pods) == (m.type == 'Pods') && has(m.object) == (m.type == 'Object') && has(m.external) == (m.type == 'External') && has(m.containerResource) == (m.type == 'ContainerResource'))"
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// Behavior is how fast the autoscaler scales up and down, as a
	// HorizontalPodAutoscaler's spec.behavior; unset directions use
	// Kubernetes' defaults.
	//
	// +optional
	Behavior *HPABehavior `json:"behavior,omitempty"`
}

// HPABehavior is a HorizontalPodAutoscaler's behavior (autoscaling/v2),
// field for field, with the API server's bounds as schema rules so that a
// value the autoscaler would refuse is refused on the NginxProxy.
type HPABehavior struct {
	// ScaleUp is the policy for scaling up.
	//
	// +optional
	ScaleUp *HPAScalingRules `json:"scaleUp,omitempty"`

	// ScaleDown is the policy for scaling down.
	//
	// +optional
	ScaleDown *HPAScalingRules `json:"scaleDown,omitempty"`
}

// HPAScalingRules are the scaling rules of one direction.
type HPAScalingRules struct {
	// StabilizationWindowSeconds is how many seconds of past
	// recommendations the autoscaler considers (0 to 3600).
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	StabilizationWindowSeconds *int32 `json:"stabilizationWindowSeconds,omitempty"`

	// SelectPolicy chooses among the policies: Max (default), Min, or
	// Disabled (no scaling in this direction).
	//
	// +optional
	// +kubebuilder:validation:Enum=Max;Min;Disabled
	SelectPolicy *string `json:"selectPolicy,omitempty"`

	// Policies are how much the autoscaler may change in a period.
	//
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Policies []HPAScalingPolicy `json:"policies,omitempty"`
}

// HPAScalingPolicy is one scaling policy.
type HPAScalingPolicy struct {
	// Type is Pods (a number of pods) or Percent (of the current pods).
	//
	// +kubebuilder:validation:Enum=Pods;Percent
	Type string `json:"type"`

	// Value is the change allowed, in Type's unit.
	//
	// +kubebuilder:validation:Minimum=1
	Value int32 `json:"value"`

	// PeriodSeconds is the window the change is allowed in (1 to 1800).
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1800
	PeriodSeconds int32 `json:"periodSeconds"`
}

// PodDisruptionBudgetSpec configures the data plane's PodDisruptionBudget.
//
// +kubebuilder:validation:XValidation:message="exactly one of minAvailable or maxUnavailable must be set",rule="has(self.minAvailable) != has(self.maxUnavailable)"
type PodDisruptionBudgetSpec struct {
	// MinAvailable is how many pods must stay available after an
	// eviction: a number (2) or a percentage of the wanted pods (50%).
	//
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:message="minAvailable must be a non-negative number or a percentage from 0% to 100%",rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// MaxUnavailable is how many pods may be unavailable after an
	// eviction: a number (1) or a percentage of the wanted pods (25%).
	//
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:message="maxUnavailable must be a non-negative number or a percentage from 0% to 100%",rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// UnhealthyPodEvictionPolicy says when pods that are not ready may be
	// evicted: IfHealthyBudget (Kubernetes' default) or AlwaysAllow.
	//
	// +optional
	// +kubebuilder:validation:Enum=IfHealthyBudget;AlwaysAllow
	UnhealthyPodEvictionPolicy *policyv1.UnhealthyPodEvictionPolicyType `json:"unhealthyPodEvictionPolicy,omitempty"`
}
