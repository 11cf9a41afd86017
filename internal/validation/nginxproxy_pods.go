package validation

import (
	"regexp"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Messages of the pod, container and Service rules of NGINX Gateway
// Fabric's scheduling and pod-shaping fields, identical to the CRD's CEL
// messages. What the CRD cannot check cheaply (nodeSelector keys and
// values, volume sources, affinity terms) the API server checks when the
// data plane's objects are applied, and a refusal reaches the Gateway's
// status; what Gatewall itself rules out (a volume or mount of the data
// plane's own) is left out and named in the status (v1alpha2's
// UsableVolumes, UsableVolumeMounts).
const (
	MsgTolerationEnums   = "a toleration's operator is Exists or Equal, its effect NoSchedule, PreferNoSchedule or NoExecute"
	MsgTolerationKey     = "a toleration without a key must have operator Exists, and one with operator Exists no value"
	MsgTolerationSeconds = "tolerationSeconds can only be set with effect NoExecute"
	MsgLifecycleOneOf    = "a lifecycle hook has exactly one of exec, httpGet, tcpSocket or sleep"
	MsgLifecycleAction   = "an exec hook needs a command, and a sleep at least 1 second"
	MsgLifecycleStop     = "stopSignal is not served"
	MsgHostPortTwice     = "each host port can appear once"
	MsgNodePortTwice     = "each port and each listenerPort can appear once"
	MsgLBClassType       = "loadBalancerClass can only be set when type is LoadBalancer"
	MsgNodePortsType     = "nodePorts can only be set when type is NodePort or LoadBalancer"
	MsgMetricType        = "a metric's type is Resource, Pods, Object, External or ContainerResource, and it sets that member only"
	MsgWAFContainerOnly  = "the WAF containers take an image and resources only"
	maxNodeSelector      = 32
	maxTolerations       = 32
	maxVolumes           = 16
	maxVolumeMounts      = 16
	maxHostPorts         = 16
	maxNodePorts         = 64
	maxHPAMetrics        = 8
	maxProbePathLen      = 256
	maxProbeDelaySecs    = 3600
	maxLBClassLen        = 253
)

// ProbePathPattern is the CRD's pattern of readinessProbe.path (NGINX
// Gateway Fabric's).
const ProbePathPattern = `^/[a-zA-Z0-9/_\-\.~]*$`

var probePathRE = regexp.MustCompile(ProbePathPattern)

// scheduling checks pod.nodeSelector, tolerations and volumes.
func scheduling(path *field.Path, p *v1alpha2.PodSpec) field.ErrorList {
	var errs field.ErrorList
	if len(p.NodeSelector) > maxNodeSelector {
		errs = append(errs, field.TooMany(path.Child("nodeSelector"), len(p.NodeSelector), maxNodeSelector))
	}
	errs = append(errs, tolerations(path.Child("tolerations"), p.Tolerations)...)
	volumes := path.Child("volumes")
	if len(p.Volumes) > maxVolumes {
		errs = append(errs, field.TooMany(volumes, len(p.Volumes), maxVolumes))
	}
	names := make([]string, len(p.Volumes))
	for i, v := range p.Volumes {
		names[i] = v.Name
	}
	return append(errs, uniqueKey(volumes, "name", names)...)
}

func tolerations(path *field.Path, ts []corev1.Toleration) field.ErrorList {
	var errs field.ErrorList
	if len(ts) > maxTolerations {
		errs = append(errs, field.TooMany(path, len(ts), maxTolerations))
	}
	enums, key, seconds := true, true, true
	for _, t := range ts {
		enums = enums && (t.Operator == "" || t.Operator == corev1.TolerationOpExists || t.Operator == corev1.TolerationOpEqual) &&
			(t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectPreferNoSchedule || t.Effect == corev1.TaintEffectNoExecute)
		exists := t.Operator == corev1.TolerationOpExists
		key = key && (t.Key != "" || exists) && !(exists && t.Value != "")
		seconds = seconds && (t.TolerationSeconds == nil || t.Effect == corev1.TaintEffectNoExecute)
	}
	for _, r := range []struct {
		ok  bool
		msg string
	}{{enums, MsgTolerationEnums}, {key, MsgTolerationKey}, {seconds, MsgTolerationSeconds}} {
		if !r.ok {
			errs = append(errs, field.Invalid(path, "array", r.msg))
		}
	}
	return errs
}

// uniqueKey refuses a key listed twice in a list the CRD declares a map on
// it, with the API server's message.
func uniqueKey(path *field.Path, key string, keys []string) field.ErrorList {
	seen := map[string]bool{}
	for i, k := range keys {
		if seen[k] {
			return field.ErrorList{field.Duplicate(path.Index(i), map[string]string{key: k})}
		}
		seen[k] = true
	}
	return nil
}

// nginxContainer checks the NGINX container's lifecycle, readinessProbe,
// hostPorts and volumeMounts.
func nginxContainer(path *field.Path, c *v1alpha2.ContainerSpec) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if l := c.Lifecycle; l != nil {
		at := path.Child("lifecycle")
		oneOf, action := true, true
		for _, h := range []*corev1.LifecycleHandler{l.PostStart, l.PreStop} {
			if h == nil {
				continue
			}
			n := 0
			for _, set := range []bool{h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.Sleep != nil} {
				if set {
					n++
				}
			}
			oneOf = oneOf && n == 1
			action = action && (h.Exec == nil || len(h.Exec.Command) > 0) && (h.Sleep == nil || h.Sleep.Seconds >= 1)
		}
		if !oneOf {
			errs = append(errs, field.Invalid(at, "object", MsgLifecycleOneOf))
		}
		if !action {
			errs = append(errs, field.Invalid(at, "object", MsgLifecycleAction))
		}
		if l.StopSignal != nil {
			errs = append(errs, field.Invalid(at, "object", MsgLifecycleStop))
		}
	}
	if r := c.ReadinessProbe; r != nil {
		at := path.Child("readinessProbe")
		if r.Port != nil {
			errs = append(errs, intRange(at.Child("port"), int64(*r.Port), 1, 65535)...)
		}
		if r.Path != nil {
			errs = append(errs, stringField(at.Child("path"), *r.Path, 0, maxProbePathLen, probePathRE)...)
		}
		if r.InitialDelaySeconds != nil {
			errs = append(errs, intRange(at.Child("initialDelaySeconds"), int64(*r.InitialDelaySeconds), 0, maxProbeDelaySecs)...)
		}
	}
	hostPorts := path.Child("hostPorts")
	if len(c.HostPorts) > maxHostPorts {
		errs = append(errs, field.TooMany(hostPorts, len(c.HostPorts), maxHostPorts))
	}
	seen, twice := map[int32]bool{}, false
	for i, p := range c.HostPorts {
		errs = append(errs, intRange(hostPorts.Index(i).Child("port"), int64(p.Port), 1, 65535)...)
		errs = append(errs, intRange(hostPorts.Index(i).Child("containerPort"), int64(p.ContainerPort), 1, 65535)...)
		twice = twice || seen[p.Port]
		seen[p.Port] = true
	}
	if twice {
		errs = append(errs, field.Invalid(hostPorts, "array", MsgHostPortTwice))
	}
	mounts := path.Child("volumeMounts")
	if len(c.VolumeMounts) > maxVolumeMounts {
		errs = append(errs, field.TooMany(mounts, len(c.VolumeMounts), maxVolumeMounts))
	}
	paths := make([]string, len(c.VolumeMounts))
	for i, m := range c.VolumeMounts {
		paths[i] = m.MountPath
	}
	return append(errs, uniqueKey(mounts, "mountPath", paths)...)
}

// wafContainers refuses the NGINX container's own fields on a WAF
// container.
func wafContainers(path *field.Path, w *v1alpha2.WAFContainers) field.ErrorList {
	for _, c := range []*v1alpha2.ContainerSpec{w.Enforcer, w.ConfigManager} {
		if c != nil && (c.Lifecycle != nil || c.ReadinessProbe != nil || c.HostPorts != nil || c.VolumeMounts != nil) {
			return field.ErrorList{field.Invalid(path, "object", MsgWAFContainerOnly)}
		}
	}
	return nil
}

// serviceExposure checks the Service's loadBalancerClass and nodePorts.
func serviceExposure(path *field.Path, svc *v1alpha2.ServiceSpec) field.ErrorList {
	var errs field.ErrorList
	if c := svc.LoadBalancerClass; c != nil {
		errs = append(errs, stringField(path.Child("loadBalancerClass"), *c, 0, maxLBClassLen, topologyKeyRE)...)
		if svc.Type != nil && *svc.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Invalid(path, "object", MsgLBClassType))
		}
	}
	if svc.NodePorts == nil {
		return errs
	}
	if svc.Type != nil && *svc.Type == corev1.ServiceTypeClusterIP {
		errs = append(errs, field.Invalid(path, "object", MsgNodePortsType))
	}
	ports := path.Child("nodePorts")
	if len(svc.NodePorts) > maxNodePorts {
		errs = append(errs, field.TooMany(ports, len(svc.NodePorts), maxNodePorts))
	}
	nodes, listeners, twice := map[int32]bool{}, map[int32]bool{}, false
	for i, p := range svc.NodePorts {
		errs = append(errs, intRange(ports.Index(i).Child("port"), int64(p.Port), 1, 65535)...)
		errs = append(errs, intRange(ports.Index(i).Child("listenerPort"), int64(p.ListenerPort), 1, 65535)...)
		twice = twice || nodes[p.Port] || listeners[p.ListenerPort]
		nodes[p.Port], listeners[p.ListenerPort] = true, true
	}
	if twice {
		errs = append(errs, field.Invalid(ports, "array", MsgNodePortTwice))
	}
	return errs
}

// hpaMetrics checks autoscaling.metrics: the member of each metric's type
// and no other. The API server checks the rest of each metric when the
// autoscaler is applied.
func hpaMetrics(path *field.Path, ms []autoscalingv2.MetricSpec) field.ErrorList {
	var errs field.ErrorList
	if len(ms) > maxHPAMetrics {
		errs = append(errs, field.TooMany(path, len(ms), maxHPAMetrics))
	}
	for _, m := range ms {
		t := m.Type
		ok := (t == autoscalingv2.ResourceMetricSourceType || t == autoscalingv2.PodsMetricSourceType || t == autoscalingv2.ObjectMetricSourceType ||
			t == autoscalingv2.ExternalMetricSourceType || t == autoscalingv2.ContainerResourceMetricSourceType) &&
			(m.Resource != nil) == (t == autoscalingv2.ResourceMetricSourceType) && (m.Pods != nil) == (t == autoscalingv2.PodsMetricSourceType) &&
			(m.Object != nil) == (t == autoscalingv2.ObjectMetricSourceType) && (m.External != nil) == (t == autoscalingv2.ExternalMetricSourceType) &&
			(m.ContainerResource != nil) == (t == autoscalingv2.ContainerResourceMetricSourceType)
		if !ok {
			return append(errs, field.Invalid(path, "array", MsgMetricType))
		}
	}
	return errs
}

// maxPatches bounds a workload's or Service's patches.
const maxPatches = 8

// patches checks the patches' number and types; what a patch does is
// checked when it is applied (the provisioner), where a patch that does
// not apply, or changes what the data plane's protection rests on, is
// left out and named in the Gateway's status.
func patches(path *field.Path, ps []v1alpha2.Patch) field.ErrorList {
	var errs field.ErrorList
	if len(ps) > maxPatches {
		errs = append(errs, field.TooMany(path, len(ps), maxPatches))
	}
	for i, p := range ps {
		if p.Type != nil {
			errs = append(errs, enum(path.Index(i).Child("type"), string(*p.Type), string(v1alpha2.PatchTypeStrategicMerge),
				string(v1alpha2.PatchTypeMerge), string(v1alpha2.PatchTypeJSONPatch))...)
		}
	}
	return errs
}
