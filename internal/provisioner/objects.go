package provisioner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/podseal"
)

// Images are the default images of the data-plane containers.
type Images struct {
	NGINX string
	// NGINXWAF is the default NGINX image of Gateways with WAF enabled:
	// one with F5's App Protect module (build/dataplane-waf); "" uses NGINX.
	NGINXWAF     string
	WAFEnforcer  string
	WAFConfigMgr string
}

// DefaultImages are used when the NginxProxy names none.
var DefaultImages = Images{
	// The image build/dataplane/Dockerfile builds.
	NGINX:        "ghcr.io/gatewall/dataplane:edge",
	WAFEnforcer:  "private-registry.nginx.com/nap/waf-enforcer:5.9.0",
	WAFConfigMgr: "private-registry.nginx.com/nap/waf-config-mgr:5.9.0",
}

// Paths inside the NGINX container.
const (
	AgentConfigDir    = "/etc/nginx-agent"
	AgentConfigFile   = "nginx-agent.conf"
	AgentTokenDir     = "/var/run/secrets/gatewall/token"
	AgentTokenFile    = "token"
	AgentCADir        = "/var/run/secrets/gatewall/ca"
	AgentCAFile       = "ca.crt"
	WAFBundlesDir     = "/etc/app_protect/bundles"
	wafBDConfigDir    = "/opt/app_protect/bd_config"
	wafConfigDir      = "/opt/app_protect/config"
	wafSecurityLogDir = "/var/log/app_protect"
	// WAFEnforcerPort is where the enforcer listens for NGINX, in the pod.
	WAFEnforcerPort = v1alpha2.WAFEnforcerPort
	// MetricsPortName names the NGINX container's metrics port.
	MetricsPortName = "metrics"
	// Prometheus' conventional annotations on the data-plane pods.
	ScrapeAnnotation     = "prometheus.io/scrape"
	ScrapePortAnnotation = "prometheus.io/port"
	ScrapePathAnnotation = "prometheus.io/path"
	// TokenAudience is the audience of the agents' ServiceAccount tokens.
	TokenAudience = "gatewall"
	// nginxUID is the user NGINX and the agent run as.
	nginxUID = 101
	// unprivilegedPortSysctl is the lowest port any user may bind.
	unprivilegedPortSysctl = "net.ipv4.ip_unprivileged_port_start"
)

// Params are what a Gateway's data plane is built from.
type Params struct {
	Gateway *gatewayv1.Gateway
	// NginxProxy is the Gateway's effective NginxProxy spec; never nil.
	NginxProxy *v1alpha2.NginxProxySpec
	// Ports are the ports of the Gateway's accepted listeners
	// (graph.Gateway.AcceptedListeners): the Service's. The pod template
	// does not list them (containerPorts), so they change without
	// restarting the pods.
	Ports []int32
	// UDPPorts are the ports of the accepted UDP listeners: the Service's
	// UDP ports.
	UDPPorts []int32
	// ReadinessPort is where NGINX answers the readiness probe
	// (graph.Gateway.ReadinessPort); 0: no probe.
	ReadinessPort int32
	// AgentConfig is the content of nginx-agent.conf.
	AgentConfig []byte
	// AgentCA is the PEM CA bundle the agent verifies Gatewall's server with.
	AgentCA []byte
	// AgentServer (host:port) and AgentServerName are Gatewall's agent
	// server and the name in its certificate, which the endpoints client
	// connects to as the agent does (the agent reads them from AgentConfig).
	AgentServer, AgentServerName string
	Images                       Images
	// Owner is the installation that makes the objects (ControllerAnnotation).
	Owner Owner
	// PullSecrets are the installation's image pull Secrets
	// (--nginx-docker-secret), copied into the Gateway's namespace for its
	// pods (PullSecretName).
	PullSecrets []*corev1.Secret
	// SealKey seals the pod template (package podseal): the agent server
	// serves only pods whose spec is one the manager rendered for the
	// Gateway. Without a key (podseal.KeySize bytes) the template carries
	// no seal, and the agent server refuses its pods.
	SealKey []byte
}

// progressDeadline is the data-plane Deployment's progressDeadlineSeconds.
const progressDeadline = 180

// agentConfigHashAnnotation on the pod template rolls the pods when the agent's configuration changes.
const agentConfigHashAnnotation = "gatewall.io/agent-config-hash"

// Objects returns a Gateway's data-plane objects, owned by the Gateway.
func Objects(p Params) []client.Object {
	objs, _ := PatchedObjects(p)
	return objs
}

// PatchedObjects returns a Gateway's data-plane objects, owned by the
// Gateway, with the NginxProxy's patches applied, and the patches left
// out, each "field: why" (patches.go).
func PatchedObjects(p Params) ([]client.Object, []string) {
	objs := objects(p)
	return objs, patchObjects(p, objs)
}

func objects(p Params) []client.Object {
	gw := p.Gateway
	name, labels := Name(gw), Labels(gw, p.NginxProxy)
	annotations := Annotations(gw, p.NginxProxy)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ControllerAnnotation] = p.Owner.ControllerName
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: n, Namespace: gw.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway", Name: gw.Name, UID: gw.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		}
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   meta(name),
		AutomountServiceAccountToken: ptr.To(false),
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(name + "-agent"),
		Data:       map[string]string{AgentConfigFile: string(p.AgentConfig)},
	}
	ca := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(name + "-agent-ca"),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{AgentCAFile: p.AgentCA},
	}
	copies := pullSecretCopies(p, meta)
	dep := workload(p, meta(name), cm.Name, ca.Name, imagePullSecrets(copies, p.NginxProxy))
	svc := service(p, meta(name))
	objs := []client.Object{sa, cm, ca}
	for _, c := range copies {
		objs = append(objs, c)
	}
	objs = append(objs, dep, svc)
	for _, o := range []client.Object{horizontalPodAutoscaler(p.NginxProxy, meta(name)), podDisruptionBudget(p.NginxProxy, meta(name), serviceSelector(gw))} {
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs
}

// nginxImage is the default NGINX image of a Gateway, with WAF or without.
func nginxImage(images Images, waf bool) string {
	if waf && images.NGINXWAF != "" {
		return images.NGINXWAF
	}
	return images.NGINX
}

// workload is the data plane's Deployment, or its DaemonSet when the
// NginxProxy asks for one: the same pods either way.
func workload(p Params, meta metav1.ObjectMeta, configMap, caSecret string, pullSecrets []corev1.LocalObjectReference) client.Object {
	template := podTemplate(p, meta, configMap, caSecret, pullSecrets)
	if p.NginxProxy.IsDaemonSet() {
		return &appsv1.DaemonSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: selector(p.Gateway)},
				Template: template,
			},
		}
	}
	// With autoscaling the replicas are the autoscaler's: Apply leaves
	// the field to it (server-side apply drops Gatewall's ownership).
	replicas := ptr.To(int32(1))
	if d := p.NginxProxy.Kubernetes; d != nil && d.Deployment != nil && d.Deployment.Replicas != nil {
		replicas = d.Deployment.Replicas
	}
	if autoscalingOf(p.NginxProxy) != nil {
		replicas = nil
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			// A rollout whose pods are not ready within this time (an image
			// that cannot be pulled, a crash loop) is reported on the
			// Gateway (DataPlaneNotReady) then rather than after the
			// default 10 minutes; nothing is rolled back.
			ProgressDeadlineSeconds: ptr.To(int32(progressDeadline)),
			Selector:                &metav1.LabelSelector{MatchLabels: selector(p.Gateway)},
			Template:                template,
		},
	}
}

// podTemplate is the data-plane pods' template, sealed (package podseal).
func podTemplate(p Params, meta metav1.ObjectMeta, configMap, caSecret string, pullSecrets []corev1.LocalObjectReference) corev1.PodTemplateSpec {
	np := p.NginxProxy
	d := np.Workload()
	var main, enforcer, configMgr *v1alpha2.ContainerSpec
	if d != nil {
		main = d.Container
		if d.WAFContainers != nil {
			enforcer, configMgr = d.WAFContainers.Enforcer, d.WAFContainers.ConfigManager
		}
	}
	waf := np.WAF == v1alpha2.WAFEnabled
	grace := terminationGrace(np)
	nginx := corev1.Container{
		Name:            "nginx",
		Image:           image(main, nginxImage(p.Images, waf)),
		ImagePullPolicy: pullPolicy(main),
		Ports:           containerPorts(np.MetricsPort()),
		Resources:       np.NGINXResources(),
		ReadinessProbe:  readinessProbe(p.ReadinessPort),
		// No capability is added: NET_BIND_SERVICE would be lost at execve
		// for uid 101 without privilege escalation. Ports below 1024 are
		// allowed by the pod's sysctl instead.
		SecurityContext: containerSecurity(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "nginx-conf", MountPath: "/etc/nginx"},
			{Name: "nginx-run", MountPath: "/var/run/nginx"},
			{Name: "nginx-cache", MountPath: "/var/cache/nginx"},
			{Name: "nginx-log", MountPath: "/var/log/nginx"},
			{Name: "agent-lib", MountPath: "/var/lib/nginx-agent"},
			{Name: "agent-log", MountPath: "/var/log/nginx-agent"},
			{Name: "agent-config", MountPath: AgentConfigDir, ReadOnly: true},
			{Name: "agent-token", MountPath: AgentTokenDir, ReadOnly: true},
			{Name: "agent-ca", MountPath: AgentCADir, ReadOnly: true},
		},
	}
	volumes := []corev1.Volume{
		emptyDir("nginx-conf"), emptyDir("nginx-run"), emptyDir("nginx-cache"), emptyDir("nginx-log"), emptyDir("agent-lib"), emptyDir("agent-log"),
		{Name: "agent-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}},
		{Name: "agent-ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: caSecret}}},
		{Name: "agent-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
			ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: TokenAudience, ExpirationSeconds: ptr.To(int64(3600)), Path: AgentTokenFile},
		}}}}},
	}
	containers := []corev1.Container{nginx, endpointsClient(p, main)}
	if waf {
		// The WAF containers of NGINX App Protect v5 share these volumes with NGINX.
		shared := []corev1.VolumeMount{
			{Name: "waf-bd-config", MountPath: wafBDConfigDir},
			{Name: "waf-config", MountPath: wafConfigDir},
			{Name: "waf-bundles", MountPath: WAFBundlesDir},
			{Name: "waf-security-log", MountPath: wafSecurityLogDir},
		}
		containers[0].VolumeMounts = append(containers[0].VolumeMounts, shared...)
		volumes = append(volumes, emptyDir("waf-bd-config"), emptyDir("waf-config"), emptyDir("waf-bundles"), emptyDir("waf-security-log"))
		containers = append(containers,
			corev1.Container{
				Name: "waf-enforcer", Image: image(enforcer, p.Images.WAFEnforcer), ImagePullPolicy: pullPolicy(enforcer),
				Env:             []corev1.EnvVar{{Name: "ENFORCER_PORT", Value: fmt.Sprint(WAFEnforcerPort)}},
				Resources:       v1alpha2.WAFResources(enforcer),
				SecurityContext: containerSecurity(),
				VolumeMounts:    []corev1.VolumeMount{shared[0], shared[3]},
			},
			corev1.Container{
				Name: "waf-config-mgr", Image: image(configMgr, p.Images.WAFConfigMgr), ImagePullPolicy: pullPolicy(configMgr),
				Resources:       v1alpha2.WAFResources(configMgr),
				SecurityContext: containerSecurity(),
				VolumeMounts:    shared[:3],
			},
		)
	}
	// Every container pauses before it stops (drain.go): NGINX keeps taking
	// connections, and what it uses (the endpoints it is sent, the WAF
	// enforcer) stays meanwhile.
	for i := range containers {
		containers[i].Lifecycle = drainLifecycle(grace)
	}
	podLabels := Labels(p.Gateway, np)
	podAnnotations := Annotations(p.Gateway, np)
	if podAnnotations == nil {
		podAnnotations = map[string]string{}
	}
	podAnnotations[ControllerAnnotation] = p.Owner.ControllerName
	if port := np.MetricsPort(); port != 0 {
		// Prometheus' conventional pod annotations; the Gateway's
		// infrastructure annotations win.
		for k, v := range map[string]string{ScrapeAnnotation: "true", ScrapePortAnnotation: fmt.Sprint(port), ScrapePathAnnotation: "/metrics"} {
			if _, set := podAnnotations[k]; !set {
				podAnnotations[k] = v
			}
		}
	}
	// The agent reads its configuration at start: roll the pods when it changes.
	podAnnotations[agentConfigHashAnnotation] = hash(p.AgentConfig)
	// Gatewall's, winning over the Gateway's: see meshOptOut.
	maps.Copy(podLabels, meshOptOutLabels)
	maps.Copy(podAnnotations, meshOptOutAnnotations)
	spec := corev1.PodSpec{
		ServiceAccountName:           meta.Name,
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(nginxUID)), RunAsGroup: ptr.To(int64(nginxUID)),
			FSGroup: ptr.To(int64(nginxUID)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			// NGINX, not root, binds the listeners' ports, :80 and :443
			// included. A safe sysctl (Kubernetes 1.22+): it applies to
			// the pod's network namespace only.
			Sysctls: []corev1.Sysctl{{Name: unprivilegedPortSysctl, Value: "0"}},
		},
		TerminationGracePeriodSeconds: grace,
		TopologySpreadConstraints:     topologySpread(d, serviceSelector(p.Gateway)),
		ImagePullSecrets:              pullSecrets,
		Containers:                    containers,
		Volumes:                       volumes,
	}
	shapePod(d, &spec, &spec.Containers[0])
	// A key too short (never the manager's: it checks its key at start)
	// leaves the template unsealed, and its pods refused.
	if seal, err := podseal.Seal(p.SealKey, p.Gateway.UID, &spec); err == nil {
		podAnnotations[podseal.Annotation] = seal
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
		Spec:       spec,
	}
}

// topologySpread is the pods' topology spread constraints, each spreading
// the pods selector selects: the Gateway's data plane's for its current
// class (its former class's pods, while it moves, are not counted).
func topologySpread(d *v1alpha2.DeploymentSpec, selector map[string]string) []corev1.TopologySpreadConstraint {
	if d == nil || d.Pod == nil {
		return nil
	}
	var out []corev1.TopologySpreadConstraint
	for _, c := range d.Pod.TopologySpreadConstraints {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, WhenUnsatisfiable: c.WhenUnsatisfiable,
			LabelSelector: &metav1.LabelSelector{MatchLabels: maps.Clone(selector)},
			MinDomains:    c.MinDomains, NodeAffinityPolicy: c.NodeAffinityPolicy, NodeTaintsPolicy: c.NodeTaintsPolicy,
		})
	}
	return out
}

// A data-plane pod runs the containers Gatewall renders and no other: its
// seal (package podseal) covers every container and volume, so a sidecar a
// service mesh injects makes the pod fail it, and the agent server refuses
// the pod. Those are the labels and annotations by which the common meshes'
// injectors leave a pod alone (Istio, Linkerd); Gatewall's own, so a
// Gateway's infrastructure metadata cannot turn injection back on.
var (
	meshOptOutLabels      = map[string]string{"sidecar.istio.io/inject": "false"}
	meshOptOutAnnotations = map[string]string{"linkerd.io/inject": "disabled"}
)

// EndpointsContainer names the container of the endpoints client.
const EndpointsContainer = "endpoints"

// endpointsClient is the container that receives the Gateway's endpoints
// from Gatewall and hands them to NGINX without a reload (package
// endpointfeed): the data-plane image's gatewall-endpoints, with the
// agent's token and CA, and NGINX's run directory, where NGINX's control
// socket and the endpoints state file are. It restarts on its own,
// without NGINX.
func endpointsClient(p Params, main *v1alpha2.ContainerSpec) corev1.Container {
	return corev1.Container{
		Name:            EndpointsContainer,
		Image:           image(main, p.Images.NGINX),
		ImagePullPolicy: pullPolicy(main),
		Command:         []string{"/usr/bin/gatewall-endpoints"},
		Args: []string{
			"--server=" + p.AgentServer, "--server-name=" + p.AgentServerName,
			"--ca-file=" + AgentCADir + "/" + AgentCAFile, "--token-file=" + AgentTokenDir + "/" + AgentTokenFile,
		},
		Resources:       p.NginxProxy.EndpointsResources(),
		SecurityContext: containerSecurity(),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "nginx-run", MountPath: "/var/run/nginx"},
			{Name: "agent-token", MountPath: AgentTokenDir, ReadOnly: true},
			{Name: "agent-ca", MountPath: AgentCADir, ReadOnly: true},
		},
	}
}

func service(p Params, meta metav1.ObjectMeta) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: serviceSelector(p.Gateway),
		},
	}
	for _, port := range sortedPorts(p.Ports) {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: fmt.Sprintf("port-%d", port), Port: port, Protocol: corev1.ProtocolTCP,
			TargetPort: intstrFromInt(port),
		})
	}
	for _, port := range sortedPorts(p.UDPPorts) {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: fmt.Sprintf("udp-%d", port), Port: port, Protocol: corev1.ProtocolUDP,
			TargetPort: intstrFromInt(port),
		})
	}
	// By port, then TCP before UDP.
	sort.SliceStable(svc.Spec.Ports, func(i, j int) bool { return svc.Spec.Ports[i].Port < svc.Spec.Ports[j].Port })
	if k := p.NginxProxy.Kubernetes; k != nil && k.Service != nil {
		s := k.Service
		if s.Type != nil {
			svc.Spec.Type = *s.Type
		}
		if s.ExternalTrafficPolicy != nil {
			svc.Spec.ExternalTrafficPolicy = *s.ExternalTrafficPolicy
		}
		if s.LoadBalancerIP != nil {
			svc.Spec.LoadBalancerIP = *s.LoadBalancerIP
		}
		svc.Spec.LoadBalancerSourceRanges = s.LoadBalancerSourceRanges
		exposeService(svc, s)
	}
	// A Gateway's spec.addresses overrides the NginxProxy's loadBalancerIP.
	// The Service has one: with several, the load balancer picks one and
	// the Gateway reports that its addresses cannot all be used.
	if reqs := graph.RequestedAddresses(p.Gateway); len(reqs) == 1 {
		svc.Spec.LoadBalancerIP = reqs[0]
	} else if len(reqs) > 1 {
		svc.Spec.LoadBalancerIP = ""
	}
	switch ptr.Deref(p.NginxProxy.IPFamily, v1alpha2.IPFamilyDual) {
	case v1alpha2.IPFamilyIPv4:
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	case v1alpha2.IPFamilyIPv6:
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	default:
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	}
	return svc
}

func sortedPorts(ports []int32) []int32 {
	seen := map[int32]bool{}
	var out []int32
	for _, p := range ports {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// containerPorts is the metrics port (0: none). The listeners' ports are
// left out: a container's ports only inform (the Service targets them by
// number), and listing them would restart every data-plane pod whenever a
// listener is added, moved, or turns valid or invalid (a certificate Secret
// that appears after its Gateway, or breaks), where NGINX takes the change
// with a reload.
func containerPorts(metrics int32) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	if metrics != 0 {
		out = append(out, corev1.ContainerPort{Name: MetricsPortName, ContainerPort: metrics, Protocol: corev1.ProtocolTCP})
	}
	return out
}

func image(c *v1alpha2.ContainerSpec, def string) string {
	if c == nil || c.Image == nil {
		return def
	}
	repo, tag := splitImage(def)
	if c.Image.Repository != nil {
		repo = *c.Image.Repository
	}
	if c.Image.Tag != nil {
		tag = *c.Image.Tag
	}
	return repo + ":" + tag
}

// splitImage splits repository:tag; a ':' before the last '/' is a registry port.
func splitImage(img string) (string, string) {
	for i := len(img) - 1; i >= 0 && img[i] != '/'; i-- {
		if img[i] == ':' {
			return img[:i], img[i+1:]
		}
	}
	return img, "latest"
}

func pullPolicy(c *v1alpha2.ContainerSpec) corev1.PullPolicy {
	if c != nil && c.Image != nil && c.Image.PullPolicy != nil {
		return *c.Image.PullPolicy
	}
	return corev1.PullIfNotPresent
}

func containerSecurity(add ...corev1.Capability) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: add},
	}
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}
