package podseal

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// The projection's types. Fields are listed one by one (not whole API
// structs) so that a field Kubernetes adds later, and perhaps defaults,
// does not change the projection of pods the manager sealed before: the
// API server must not turn a sealed template into a pod that fails its
// seal. Where the API server defaults a field held here, both sides get
// the default (normalize*). Kubernetes itself avoids defaulting new fields
// of a PodSpec (it would roll every Deployment on upgrade).
type podProjection struct {
	ServiceAccountName           string                    `json:"serviceAccountName"`
	AutomountServiceAccountToken *bool                     `json:"automountServiceAccountToken"`
	HostNetwork                  bool                      `json:"hostNetwork"`
	HostPID                      bool                      `json:"hostPID"`
	HostIPC                      bool                      `json:"hostIPC"`
	ShareProcessNamespace        bool                      `json:"shareProcessNamespace"`
	HostUsers                    *bool                     `json:"hostUsers"`
	SecurityContext              podSecurity               `json:"securityContext"`
	ResourceClaims               []corev1.PodResourceClaim `json:"resourceClaims"`
	InitContainers               []containerProjection     `json:"initContainers"`
	Containers                   []containerProjection     `json:"containers"`
	Volumes                      []volumeProjection        `json:"volumes"`
	// Placement, in a v2 seal's projection only (seal.go's version).
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Affinity     *affinity           `json:"affinity,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}

// affinity is a pod's affinity but its required node affinity, which the
// DaemonSet controller replaces with one to the pod's node, as the
// scheduler sets every pod's nodeName: neither can be held (package doc).
type affinity struct {
	NodePreferred   []corev1.PreferredSchedulingTerm `json:"nodePreferred,omitempty"`
	PodAffinity     *corev1.PodAffinity              `json:"podAffinity,omitempty"`
	PodAntiAffinity *corev1.PodAntiAffinity          `json:"podAntiAffinity,omitempty"`
}

func projectAffinity(a *corev1.Affinity) *affinity {
	if a == nil {
		return nil
	}
	out := &affinity{PodAffinity: a.PodAffinity, PodAntiAffinity: a.PodAntiAffinity}
	if a.NodeAffinity != nil {
		out.NodePreferred = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if out.NodePreferred == nil && out.PodAffinity == nil && out.PodAntiAffinity == nil {
		return nil
	}
	return out
}

// conditionTaints are the taints Kubernetes puts on nodes for their
// conditions. The DaemonSet controller adds tolerations of them to its
// pods, and the DefaultTolerationSeconds admission plugin to every pod,
// replacing a template's own of the same key: they are not held.
var conditionTaints = map[string]bool{
	"node.kubernetes.io/not-ready": true, "node.kubernetes.io/unreachable": true, "node.kubernetes.io/disk-pressure": true,
	"node.kubernetes.io/memory-pressure": true, "node.kubernetes.io/pid-pressure": true, "node.kubernetes.io/unschedulable": true,
	"node.kubernetes.io/network-unavailable": true,
}

func projectTolerations(ts []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		if !conditionTaints[t.Key] {
			out = append(out, t)
		}
	}
	return out
}

// hostPort is a container port bound on the node, with the API server's
// default protocol.
type hostPort struct {
	ContainerPort int32           `json:"containerPort"`
	HostPort      int32           `json:"hostPort"`
	Protocol      corev1.Protocol `json:"protocol"`
	HostIP        string          `json:"hostIP"`
}

// podSecurity is what decides the users, groups and kernel settings of a
// pod's processes and files. The API server defaults a missing pod
// security context to an empty one: the same projection.
type podSecurity struct {
	RunAsUser          *int64                  `json:"runAsUser"`
	RunAsGroup         *int64                  `json:"runAsGroup"`
	RunAsNonRoot       *bool                   `json:"runAsNonRoot"`
	FSGroup            *int64                  `json:"fsGroup"`
	SupplementalGroups []int64                 `json:"supplementalGroups"`
	Sysctls            []corev1.Sysctl         `json:"sysctls"`
	SeccompProfile     *corev1.SeccompProfile  `json:"seccompProfile"`
	AppArmorProfile    *corev1.AppArmorProfile `json:"appArmorProfile"`
	SELinuxOptions     *corev1.SELinuxOptions  `json:"seLinuxOptions"`
}

func projectPodSecurity(sc *corev1.PodSecurityContext) podSecurity {
	if sc == nil {
		return podSecurity{}
	}
	return podSecurity{
		RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup, RunAsNonRoot: sc.RunAsNonRoot, FSGroup: sc.FSGroup,
		SupplementalGroups: sc.SupplementalGroups, Sysctls: sc.Sysctls,
		SeccompProfile: sc.SeccompProfile, AppArmorProfile: sc.AppArmorProfile, SELinuxOptions: sc.SELinuxOptions,
	}
}

// containerProjection is what decides the code a container runs, with
// which files, environment and privileges. Exec probes and lifecycle hooks
// run commands inside the container: their commands are held; other
// probes are made from outside it and are left out.
type containerProjection struct {
	Name            string                         `json:"name"`
	Image           string                         `json:"image"`
	Command         []string                       `json:"command"`
	Args            []string                       `json:"args"`
	WorkingDir      string                         `json:"workingDir"`
	RestartPolicy   *corev1.ContainerRestartPolicy `json:"restartPolicy"`
	Env             []envVar                       `json:"env"`
	EnvFrom         []corev1.EnvFromSource         `json:"envFrom"`
	VolumeMounts    []corev1.VolumeMount           `json:"volumeMounts"`
	VolumeDevices   []corev1.VolumeDevice          `json:"volumeDevices"`
	SecurityContext *containerSecurity             `json:"securityContext"`
	Exec            map[string][]string            `json:"exec"`
	ResourceClaims  []corev1.ResourceClaim         `json:"resourceClaims"`
	// HostPorts, in a v2 seal's projection only.
	HostPorts []hostPort `json:"hostPorts,omitempty"`
}

// envVar is an environment variable; a value from elsewhere is held with
// the API server's defaults applied.
type envVar struct {
	Name      string               `json:"name"`
	Value     string               `json:"value"`
	ValueFrom *corev1.EnvVarSource `json:"valueFrom"`
}

type containerSecurity struct {
	Capabilities             *corev1.Capabilities    `json:"capabilities"`
	Privileged               *bool                   `json:"privileged"`
	SELinuxOptions           *corev1.SELinuxOptions  `json:"seLinuxOptions"`
	RunAsUser                *int64                  `json:"runAsUser"`
	RunAsGroup               *int64                  `json:"runAsGroup"`
	RunAsNonRoot             *bool                   `json:"runAsNonRoot"`
	ReadOnlyRootFilesystem   *bool                   `json:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool                   `json:"allowPrivilegeEscalation"`
	ProcMount                *corev1.ProcMountType   `json:"procMount"`
	SeccompProfile           *corev1.SeccompProfile  `json:"seccompProfile"`
	AppArmorProfile          *corev1.AppArmorProfile `json:"appArmorProfile"`
}

func projectContainer(c corev1.Container, placement bool) containerProjection {
	p := containerProjection{
		Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args, WorkingDir: c.WorkingDir,
		RestartPolicy: c.RestartPolicy, EnvFrom: c.EnvFrom, VolumeMounts: c.VolumeMounts, VolumeDevices: c.VolumeDevices,
		ResourceClaims: c.Resources.Claims,
	}
	for _, port := range c.Ports {
		if placement && port.HostPort != 0 {
			protocol := port.Protocol
			if protocol == "" {
				protocol = corev1.ProtocolTCP
			}
			p.HostPorts = append(p.HostPorts, hostPort{ContainerPort: port.ContainerPort, HostPort: port.HostPort, Protocol: protocol, HostIP: port.HostIP})
		}
	}
	for _, e := range c.Env {
		p.Env = append(p.Env, envVar{Name: e.Name, Value: e.Value, ValueFrom: normalizeEnvSource(e.ValueFrom)})
	}
	if sc := c.SecurityContext; sc != nil {
		p.SecurityContext = &containerSecurity{
			Capabilities: sc.Capabilities, Privileged: sc.Privileged, SELinuxOptions: sc.SELinuxOptions,
			RunAsUser: sc.RunAsUser, RunAsGroup: sc.RunAsGroup, RunAsNonRoot: sc.RunAsNonRoot,
			ReadOnlyRootFilesystem: sc.ReadOnlyRootFilesystem, AllowPrivilegeEscalation: sc.AllowPrivilegeEscalation,
			ProcMount: sc.ProcMount, SeccompProfile: sc.SeccompProfile, AppArmorProfile: sc.AppArmorProfile,
		}
	}
	exec := map[string]*corev1.ExecAction{}
	for name, probe := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
		if probe != nil {
			exec[name] = probe.Exec
		}
	}
	if l := c.Lifecycle; l != nil {
		for name, h := range map[string]*corev1.LifecycleHandler{"postStart": l.PostStart, "preStop": l.PreStop} {
			if h != nil {
				exec[name] = h.Exec
			}
		}
	}
	for name, e := range exec {
		if e == nil {
			continue
		}
		if p.Exec == nil {
			p.Exec = map[string][]string{}
		}
		// An exec handler with no command is refused by validation; it is
		// held as an empty list all the same.
		p.Exec[name] = append([]string{}, e.Command...)
	}
	return p
}

// normalizeEnvSource applies the API server's defaults to a copy of s.
func normalizeEnvSource(s *corev1.EnvVarSource) *corev1.EnvVarSource {
	if s == nil {
		return nil
	}
	s = s.DeepCopy()
	if s.FieldRef != nil && s.FieldRef.APIVersion == "" {
		s.FieldRef.APIVersion = "v1"
	}
	if s.FileKeyRef != nil && s.FileKeyRef.Optional == nil {
		s.FileKeyRef.Optional = ptr.To(false)
	}
	return s
}

// volumeProjection is a volume: the kinds the manager renders are held
// field by field with their defaults applied; any other kind (which no
// sealed template has) is held as its source's JSON.
type volumeProjection struct {
	Name      string           `json:"name"`
	EmptyDir  *emptyDir        `json:"emptyDir,omitempty"`
	ConfigMap *configMapVolume `json:"configMap,omitempty"`
	Secret    *secretVolume    `json:"secret,omitempty"`
	Projected *projectedVolume `json:"projected,omitempty"`
	Other     json.RawMessage  `json:"other,omitempty"`
}

type emptyDir struct {
	Medium    corev1.StorageMedium `json:"medium"`
	SizeLimit *resource.Quantity   `json:"sizeLimit"`
}

type configMapVolume struct {
	Name        string             `json:"name"`
	Items       []corev1.KeyToPath `json:"items"`
	DefaultMode int32              `json:"defaultMode"`
	Optional    bool               `json:"optional"`
}

type secretVolume struct {
	SecretName  string             `json:"secretName"`
	Items       []corev1.KeyToPath `json:"items"`
	DefaultMode int32              `json:"defaultMode"`
	Optional    bool               `json:"optional"`
}

type projectedVolume struct {
	Sources     []projectedSource `json:"sources"`
	DefaultMode int32             `json:"defaultMode"`
}

type projectedSource struct {
	ServiceAccountToken *tokenProjection `json:"serviceAccountToken,omitempty"`
	Other               json.RawMessage  `json:"other,omitempty"`
}

type tokenProjection struct {
	Audience          string `json:"audience"`
	ExpirationSeconds int64  `json:"expirationSeconds"`
	Path              string `json:"path"`
}

func projectVolume(v corev1.Volume) (volumeProjection, error) {
	p := volumeProjection{Name: v.Name}
	s := v.VolumeSource
	switch {
	case s.EmptyDir != nil:
		p.EmptyDir = &emptyDir{Medium: s.EmptyDir.Medium, SizeLimit: s.EmptyDir.SizeLimit}
	case s.ConfigMap != nil:
		p.ConfigMap = &configMapVolume{Name: s.ConfigMap.Name, Items: s.ConfigMap.Items,
			DefaultMode: ptr.Deref(s.ConfigMap.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode), Optional: ptr.Deref(s.ConfigMap.Optional, false)}
	case s.Secret != nil:
		p.Secret = &secretVolume{SecretName: s.Secret.SecretName, Items: s.Secret.Items,
			DefaultMode: ptr.Deref(s.Secret.DefaultMode, corev1.SecretVolumeSourceDefaultMode), Optional: ptr.Deref(s.Secret.Optional, false)}
	case s.Projected != nil:
		p.Projected = &projectedVolume{DefaultMode: ptr.Deref(s.Projected.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)}
		for _, src := range s.Projected.Sources {
			if t := src.ServiceAccountToken; t != nil && src.ConfigMap == nil && src.Secret == nil && src.DownwardAPI == nil &&
				src.ClusterTrustBundle == nil && src.PodCertificate == nil {
				p.Projected.Sources = append(p.Projected.Sources, projectedSource{ServiceAccountToken: &tokenProjection{
					Audience: t.Audience, ExpirationSeconds: ptr.Deref(t.ExpirationSeconds, 3600), Path: t.Path}})
				continue
			}
			raw, err := json.Marshal(normalizeProjection(src))
			if err != nil {
				return volumeProjection{}, fmt.Errorf("encoding a source of volume %s: %w", v.Name, err)
			}
			p.Projected.Sources = append(p.Projected.Sources, projectedSource{Other: raw})
		}
	default:
		raw, err := json.Marshal(normalizeSource(s))
		if err != nil {
			return volumeProjection{}, fmt.Errorf("encoding volume %s: %w", v.Name, err)
		}
		p.Other = raw
	}
	return p, nil
}
