package podseal

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var (
	key      = bytes.Repeat([]byte{7}, KeySize)
	otherKey = bytes.Repeat([]byte{8}, KeySize)
)

const gatewayUID = types.UID("6c1f0e4e-0000-4000-8000-000000000001")

// template is a data-plane pod spec shaped as the provisioner renders it
// (test/envtest seals the provisioner's own against a real API server).
func template() *corev1.PodSpec {
	sec := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return &corev1.PodSpec{
		ServiceAccountName:           "gw-nginx",
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(101)), FSGroup: ptr.To(int64(101)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			Sysctls:        []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
		},
		Containers: []corev1.Container{
			{
				Name: "nginx", Image: "ghcr.io/gatewall/dataplane:edge", SecurityContext: sec,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
					Path: "/readyz", Port: intstr.FromInt32(8999)}}, PeriodSeconds: 2},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "nginx-conf", MountPath: "/etc/nginx"},
					{Name: "agent-config", MountPath: "/etc/nginx-agent", ReadOnly: true},
					{Name: "agent-token", MountPath: "/var/run/secrets/gatewall/token", ReadOnly: true},
				},
			},
			{
				Name: "endpoints", Image: "ghcr.io/gatewall/dataplane:edge", SecurityContext: sec,
				Command: []string{"/usr/bin/gatewall-endpoints"}, Args: []string{"--server=gatewall-agent:8443"},
				VolumeMounts: []corev1.VolumeMount{{Name: "agent-token", MountPath: "/var/run/secrets/gatewall/token", ReadOnly: true}},
			},
		},
		Volumes: []corev1.Volume{
			{Name: "nginx-conf", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "agent-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "gw-nginx-agent"}}}},
			{Name: "agent-ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "gw-nginx-agent-ca"}}},
			{Name: "agent-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
				ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "gatewall", ExpirationSeconds: ptr.To(int64(3600)), Path: "token"},
			}}}}},
		},
	}
}

// sealedPod is a pod made from spec, sealed as spec rendered for
// gatewayUID under key.
func sealedPod(t *testing.T, spec *corev1.PodSpec) *corev1.Pod {
	t.Helper()
	seal, err := Seal(key, gatewayUID, spec)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gw-nginx-abc", Annotations: map[string]string{Annotation: seal}},
		Spec:       *spec.DeepCopy(),
	}
}

// TestSealCoversWhatRunsWithTheFiles: a pod whose spec differs from the
// sealed one in anything that decides which code runs with the Gateway's
// files, or with what privileges, fails the seal; so does the seal of
// another Gateway or key.
func TestSealCoversWhatRunsWithTheFiles(t *testing.T) {
	if err := Verify(key, gatewayUID, sealedPod(t, template())); err != nil {
		t.Fatalf("the sealed pod itself: %v", err)
	}
	for name, change := range map[string]func(p *corev1.Pod){
		"another image":       func(p *corev1.Pod) { p.Spec.Containers[0].Image = "evil.example/dataplane:edge" },
		"another command":     func(p *corev1.Pod) { p.Spec.Containers[1].Command = []string{"/bin/sh", "-c", "cat /etc/nginx/*"} },
		"other arguments":     func(p *corev1.Pod) { p.Spec.Containers[1].Args = []string{"--server=evil.example:8443"} },
		"a working directory": func(p *corev1.Pod) { p.Spec.Containers[1].WorkingDir = "/tmp" },
		"an environment variable": func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "NGINX_AGENT_COMMAND_SERVER_HOST", Value: "evil.example"}}
		},
		"an environment from a ConfigMap": func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}
		},
		"a mount more": func(p *corev1.Pod) {
			p.Spec.Containers[1].VolumeMounts = append(p.Spec.Containers[1].VolumeMounts, corev1.VolumeMount{Name: "nginx-conf", MountPath: "/steal"})
		},
		"a mount moved": func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].MountPath = "/etc/other" },
		"privileged": func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		},
		"a capability": func(p *corev1.Pod) {
			p.Spec.Containers[1].SecurityContext = p.Spec.Containers[1].SecurityContext.DeepCopy()
			p.Spec.Containers[1].SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_PTRACE"}
		},
		"a container more": func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Image: "mesh/proxy:1"})
		},
		"a container less": func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[:1] },
		"an init container": func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"true"}}}
		},
		"a volume more": func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		},
		"another ConfigMap": func(p *corev1.Pod) { p.Spec.Volumes[1].ConfigMap.Name = "attacker-config" },
		"another token audience": func(p *corev1.Pod) {
			p.Spec.Volumes[3].Projected.Sources[0].ServiceAccountToken.Audience = "other"
		},
		"an empty directory turned into a host path": func(p *corev1.Pod) {
			p.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kubelet"}}
		},
		"another ServiceAccount":     func(p *corev1.Pod) { p.Spec.ServiceAccountName = "other" },
		"the API token mounted":      func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = nil },
		"the host's processes":       func(p *corev1.Pod) { p.Spec.HostPID = true },
		"the host's network":         func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		"a shared process namespace": func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) },
		"another user":               func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr.To(int64(0)) },
		"an exec readiness probe": func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "steal"}}}}
		},
		"a postStart hook": func(p *corev1.Pod) {
			p.Spec.Containers[1].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh"}}}}
		},
		"an ephemeral container": func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}, TargetContainerName: "nginx"}}
		},
		"no seal":        func(p *corev1.Pod) { delete(p.Annotations, Annotation) },
		"a garbled seal": func(p *corev1.Pod) { p.Annotations[Annotation] = "v1.!!!" },
		"a seal of another version": func(p *corev1.Pod) {
			p.Annotations[Annotation] = "v9." + strings.TrimPrefix(p.Annotations[Annotation], "v1.")
		},
		"another Gateway's seal": func(p *corev1.Pod) {
			seal, _ := Seal(key, "another-uid", &p.Spec)
			p.Annotations[Annotation] = seal
		},
		"another installation's seal": func(p *corev1.Pod) {
			seal, _ := Seal(otherKey, gatewayUID, &p.Spec)
			p.Annotations[Annotation] = seal
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := sealedPod(t, template())
			change(p)
			if err := Verify(key, gatewayUID, p); err == nil {
				t.Fatal("the pod passes its seal")
			}
		})
	}
}

// TestSealIgnoresWhatTheClusterChanges: what the API server defaults, and
// what does not decide the code or the files (scheduling, resources,
// probes' timing, metadata), leaves the seal valid.
func TestSealIgnoresWhatTheClusterChanges(t *testing.T) {
	for name, change := range map[string]func(p *corev1.Pod){
		// The API server's defaults of what the projection holds.
		"defaulted volume modes": func(p *corev1.Pod) {
			p.Spec.Volumes[1].ConfigMap.DefaultMode = ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
			p.Spec.Volumes[2].Secret.DefaultMode = ptr.To(corev1.SecretVolumeSourceDefaultMode)
			p.Spec.Volumes[3].Projected.DefaultMode = ptr.To(corev1.ProjectedVolumeSourceDefaultMode)
		},
		"a defaulted token expiry": func(p *corev1.Pod) {
			p.Spec.Volumes[3].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = nil
		},
		// And what the cluster sets on a pod of the template.
		"scheduling": func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}
			p.Spec.Priority = ptr.To(int32(0))
		},
		// What the DaemonSet controller adds to its pods: an affinity to
		// their node, the tolerations of node conditions (which replace a
		// template's own of their keys).
		"a DaemonSet pod's placement": func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}}}}}}
			for _, taint := range []string{"not-ready", "unreachable", "disk-pressure", "memory-pressure", "pid-pressure", "unschedulable", "network-unavailable"} {
				p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "node.kubernetes.io/" + taint, Operator: corev1.TolerationOpExists})
			}
		},
		"a port that is not a host port's": func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 9113, Name: "metrics"})
		},
		"defaulted container fields": func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				c := &p.Spec.Containers[i]
				c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.PullIfNotPresent, "/dev/termination-log", corev1.TerminationMessageReadFile
			}
			p.Spec.Containers[0].Resources.Requests = p.Spec.Containers[0].Resources.Limits
			p.Spec.Containers[0].ReadinessProbe.TimeoutSeconds = 1
			p.Spec.Containers[0].ReadinessProbe.HTTPGet.Scheme = corev1.URISchemeHTTP
		},
		"defaulted pod fields": func(p *corev1.Pod) {
			p.Spec.DNSPolicy, p.Spec.RestartPolicy, p.Spec.SchedulerName = corev1.DNSClusterFirst, corev1.RestartPolicyAlways, "default-scheduler"
			p.Spec.DeprecatedServiceAccount = p.Spec.ServiceAccountName
			p.Spec.EnableServiceLinks = ptr.To(true)
			p.Spec.TerminationGracePeriodSeconds = ptr.To(int64(30))
		},
		"labels and other annotations": func(p *corev1.Pod) {
			p.Labels = map[string]string{"pod-template-hash": "abc"}
			p.Annotations["kubectl.kubernetes.io/restartedAt"] = "now"
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := sealedPod(t, template())
			change(p)
			if err := Verify(key, gatewayUID, p); err != nil {
				t.Fatalf("the pod fails its seal: %v", err)
			}
		})
	}
	// A pod security context the API server defaults to an empty one.
	spec := template()
	spec.SecurityContext = nil
	p := sealedPod(t, spec)
	p.Spec.SecurityContext = &corev1.PodSecurityContext{}
	if err := Verify(key, gatewayUID, p); err != nil {
		t.Fatalf("an empty pod security context, defaulted: %v", err)
	}
	// An environment variable from a field, whose API version is defaulted.
	spec = template()
	spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	p = sealedPod(t, spec)
	p.Spec.Containers[0].Env[0].ValueFrom.FieldRef.APIVersion = "v1"
	if err := Verify(key, gatewayUID, p); err != nil {
		t.Fatalf("a field reference's API version, defaulted: %v", err)
	}
}

// TestProjectionIsCanonical: the same spec projects to the same bytes, and
// the projection of what a pod's creator can write is in it.
func TestProjectionIsCanonical(t *testing.T) {
	a, err := Projection(template())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Projection(template())
	if !bytes.Equal(a, b) {
		t.Fatal("one spec, two projections")
	}
	for _, want := range []string{`"image":"ghcr.io/gatewall/dataplane:edge"`, `"audience":"gatewall"`, `"defaultMode":420`, `"serviceAccountName":"gw-nginx"`} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("the projection lacks %s:\n%s", want, a)
		}
	}
	if _, err := Seal(key[:16], gatewayUID, template()); err == nil {
		t.Error("a short key seals")
	}
}

// TestProjectionWithoutPlacement: a template without placement or host
// ports projects as before the seal held them (the bytes have none of
// their keys), so pods sealed by an earlier manager still pass; a host
// port's protocol is held with the API server's default.
func TestProjectionWithoutPlacement(t *testing.T) {
	p, err := Projection(template())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"nodeSelector"`, `"affinity"`, `"tolerations"`, `"hostPorts"`} {
		if bytes.Contains(p, []byte(k)) {
			t.Errorf("the projection of a template without placement has %s: %s", k, p)
		}
	}
	spec := template()
	spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	pod := sealedPod(t, spec)
	pod.Spec.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP
	if err := Verify(key, gatewayUID, pod); err != nil {
		t.Errorf("a host port's defaulted protocol: %v", err)
	}
}

// placed is template() with placement: a node selector, a toleration and a
// host port, which a v2 seal holds.
func placed() *corev1.PodSpec {
	spec := template()
	spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gateway", Effect: corev1.TaintEffectNoSchedule}}
	spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	return spec
}

// TestSealCoversPlacement: the pods of a template with placement carry a
// v2 seal, which holds where they may run: another node selector,
// toleration, affinity or host port, or none, fails it, and so does the
// seal read as a v1 one; what Kubernetes adds (a DaemonSet pod's node
// affinity, node conditions' tolerations, a defaulted protocol) does not.
// A template without placement keeps its v1 seal, which leaves placement
// out as before it was sealed: a toleration or node selector a mutating
// admission adds to every pod of a namespace does not fail it.
func TestSealCoversPlacement(t *testing.T) {
	if seal := sealedPod(t, placed()).Annotations[Annotation]; !strings.HasPrefix(seal, "v2.") {
		t.Fatalf("a template with placement is sealed %q, want v2", seal)
	}
	if err := Verify(key, gatewayUID, sealedPod(t, placed())); err != nil {
		t.Fatalf("the placed pod itself: %v", err)
	}
	for name, change := range map[string]func(p *corev1.Pod){
		"a node selector": func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "node-with-secrets"}
		},
		"a toleration": func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}
		},
		"a preferred node affinity": func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "role", Operator: corev1.NodeSelectorOpExists}}}}}}}
		},
		"a pod affinity": func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "vault"}}}}}}
		},
		"a host port": func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 80, HostPort: 80})
		},
		"another node selector value": func(p *corev1.Pod) { p.Spec.NodeSelector["kubernetes.io/os"] = "windows" },
		"no node selector":            func(p *corev1.Pod) { p.Spec.NodeSelector = nil },
		"another host port":           func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = 10250 },
		"the seal read as v1": func(p *corev1.Pod) {
			p.Annotations[Annotation] = "v1." + strings.TrimPrefix(p.Annotations[Annotation], "v2.")
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := sealedPod(t, placed())
			change(p)
			if err := Verify(key, gatewayUID, p); err == nil {
				t.Fatal("the pod passes its seal")
			}
		})
	}
	for name, change := range map[string]func(p *corev1.Pod){
		"a DaemonSet pod's placement": func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}}}}}}
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "node.kubernetes.io/unschedulable", Operator: corev1.TolerationOpExists})
		},
		"a defaulted protocol": func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP },
	} {
		t.Run("passes: "+name, func(t *testing.T) {
			p := sealedPod(t, placed())
			change(p)
			if err := Verify(key, gatewayUID, p); err != nil {
				t.Fatalf("the pod fails its seal: %v", err)
			}
		})
	}
	t.Run("passes: a namespace's default toleration and node selector on a pod sealed without placement", func(t *testing.T) {
		p := sealedPod(t, template())
		if seal := p.Annotations[Annotation]; !strings.HasPrefix(seal, "v1.") {
			t.Fatalf("a template without placement is sealed %q, want v1", seal)
		}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		p.Spec.NodeSelector = map[string]string{"pool": "general"}
		if err := Verify(key, gatewayUID, p); err != nil {
			t.Fatalf("the pod fails its seal: %v", err)
		}
	})
}
