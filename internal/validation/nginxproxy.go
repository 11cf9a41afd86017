package validation

import (
	"net/netip"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Messages of the NginxProxy rules, identical to the CRD's CEL messages.
const (
	MsgLBIPNotIPv4        = "loadBalancerIP must be an IPv4 address when ipFamily is ipv4"
	MsgLBIPNotIPv6        = "loadBalancerIP must be an IPv6 address when ipFamily is ipv6"
	MsgMetricsPortWAF     = "metrics.port cannot be 50000 when waf is enabled: the WAF enforcer listens there"
	MsgLBIPType           = "loadBalancerIP can only be set when type is LoadBalancer"
	MsgWorkloadOneOf      = "only one of deployment or daemonSet can be set"
	MsgLBRangesType       = "loadBalancerSourceRanges can only be set when type is LoadBalancer"
	MsgTrafficPolicyType  = "externalTrafficPolicy can only be set when type is NodePort or LoadBalancer"
	MsgLBIPNotIP          = "loadBalancerIP must be an IP address"
	MsgLBRangesNotCIDR    = "loadBalancerSourceRanges must be CIDRs"
	MsgConnectTimeout     = "connectTimeout must be between 1ms and 60s"
	MsgFailTimeout        = "failTimeout must be between 1s and 5m"
	MsgShutdownTimeout    = "workerShutdownTimeout must be between 1s and 1h"
	MsgTCPIdleTimeout     = "tcpIdleTimeout must be between 1s and 24h"
	MsgUDPSessionTimeout  = "udpSessionTimeout must be between 1s and 1h"
	MsgResolverIP         = "value must be an IP address when type is IPAddress"
	MsgResolverHostname   = "value must be a lower-case DNS name (RFC 1123) when type is Hostname"
	maxResolverAddresses  = 16
	maxResolverValueLen   = 253
	maxL4Connections      = 32767
	maxUpstreamTries      = 10
	maxSourceRanges       = 64
	maxSourceRangeLen     = 49 // the longest IPv6 CIDR text
	maxLBIPLen            = 45 // the longest IPv6 address text
	maxWorkerConnections  = 65535
	maxReplicas           = 1000
	maxImageRepositoryLen = 255
	maxImageTagLen        = 128
	maxImagePullSecrets   = 16
	// maxTerminationGraceSecs is workerShutdownTimeout's bound.
	maxTerminationGraceSecs = 3600
	maxOverrideFields       = 9
	maxInfrastructureKeys   = 64
	// maxInfrastructureKeyLen is a DNS subdomain prefix, "/" and a name.
	maxInfrastructureKeyLen = 253 + 1 + 63
)

// NginxProxy re-checks an NginxProxy against its CRD's rules.
func NginxProxy(np *v1alpha2.NginxProxy) field.ErrorList {
	spec := field.NewPath("spec")
	s := np.Spec
	var errs field.ErrorList
	errs = append(errs, enum(spec.Child("waf"), string(s.WAF), "", "enabled", "disabled")...)
	if s.IPFamily != nil {
		errs = append(errs, enum(spec.Child("ipFamily"), string(*s.IPFamily), "dual", "ipv4", "ipv6")...)
	}
	if s.WorkerConnections != nil {
		errs = append(errs, intRange(spec.Child("workerConnections"), int64(*s.WorkerConnections), 1, maxWorkerConnections)...)
	}
	errs = append(errs, logging(spec.Child("logging"), s.Logging)...)
	if m := s.Metrics; m != nil && m.Port != nil {
		port := spec.Child("metrics", "port")
		errs = append(errs, intRange(port, int64(*m.Port), 1, 65535)...)
		if s.WAF == v1alpha2.WAFEnabled && *m.Port == v1alpha2.WAFEnforcerPort {
			errs = append(errs, field.Invalid(spec, "object", MsgMetricsPortWAF))
		}
	}
	if u := s.Upstreams; u != nil {
		path := spec.Child("upstreams")
		errs = append(errs, durationRange(path.Child("connectTimeout"), u.ConnectTimeout, time.Millisecond, time.Minute, MsgConnectTimeout)...)
		errs = append(errs, durationRange(path.Child("failTimeout"), u.FailTimeout, time.Second, 5*time.Minute, MsgFailTimeout)...)
		if u.MaxTries != nil {
			errs = append(errs, intRange(path.Child("maxTries"), int64(*u.MaxTries), 1, maxUpstreamTries)...)
		}
		if u.MaxRetries != nil {
			errs = append(errs, intRange(path.Child("maxRetries"), int64(*u.MaxRetries), 0, maxUpstreamTries)...)
		}
	}
	if l4 := s.L4; l4 != nil {
		path := spec.Child("l4")
		if l4.MaxConnections != nil {
			errs = append(errs, intRange(path.Child("maxConnections"), int64(*l4.MaxConnections), 1, maxL4Connections)...)
		}
		errs = append(errs, durationRange(path.Child("tcpIdleTimeout"), l4.TCPIdleTimeout, time.Second, 24*time.Hour, MsgTCPIdleTimeout)...)
		errs = append(errs, durationRange(path.Child("udpSessionTimeout"), l4.UDPSessionTimeout, time.Second, time.Hour, MsgUDPSessionTimeout)...)
	}
	errs = append(errs, durationRange(spec.Child("workerShutdownTimeout"), s.WorkerShutdownTimeout, time.Second, time.Hour, MsgShutdownTimeout)...)
	errs = append(errs, dnsResolver(spec.Child("dnsResolver"), s.DNSResolver)...)
	errs = append(errs, nginxFields(spec, &s)...)
	errs = append(errs, gatewayOverrides(spec.Child("allowGatewayOverrides"), s.AllowGatewayOverrides)...)
	if k := s.Kubernetes; k != nil {
		if k.Deployment != nil && k.DaemonSet != nil {
			errs = append(errs, field.Invalid(spec.Child("kubernetes"), "object", MsgWorkloadOneOf))
		}
		if d := k.Deployment; d != nil {
			errs = append(errs, deployment(spec.Child("kubernetes", "deployment"), d)...)
		}
		if k.DaemonSet != nil {
			// Workload is the DaemonSet's when it is set.
			ds := (&v1alpha2.NginxProxySpec{Kubernetes: &v1alpha2.KubernetesSpec{DaemonSet: k.DaemonSet}}).Workload()
			errs = append(errs, podSettings(spec.Child("kubernetes", "daemonSet"), ds)...)
		}
		if svc := k.Service; svc != nil {
			errs = append(errs, service(spec, s.IPFamily, svc)...)
		}
	}
	return errs
}

// dnsResolver checks NGINX Gateway Fabric's spec.dnsResolver, with the
// CRD's rules: durations of its Duration type, 1 to 16 addresses, each an
// IP address (as CEL's isIP) or a lower-case DNS name with labels of at
// most 63 characters.
func dnsResolver(path *field.Path, r *v1alpha2.DNSResolver) field.ErrorList {
	if r == nil {
		return nil
	}
	errs := duration(path.Child("timeout"), r.Timeout)
	errs = append(errs, duration(path.Child("cacheTTL"), r.CacheTTL)...)
	addrs := path.Child("addresses")
	switch {
	case r.Addresses == nil:
		errs = append(errs, field.Required(addrs, ""))
	case len(r.Addresses) == 0:
		errs = append(errs, field.Invalid(addrs, 0, "should have at least 1 items"))
	case len(r.Addresses) > maxResolverAddresses:
		errs = append(errs, field.TooMany(addrs, len(r.Addresses), maxResolverAddresses))
	}
	for i, a := range r.Addresses {
		p := addrs.Index(i)
		errs = append(errs, enum(p.Child("type"), string(a.Type), string(v1alpha2.DNSResolverIPAddressType), string(v1alpha2.DNSResolverHostnameType))...)
		errs = append(errs, stringField(p.Child("value"), a.Value, 1, maxResolverValueLen, nil)...)
		switch a.Type {
		case v1alpha2.DNSResolverIPAddressType:
			// As CEL's isIP: no zone, no IPv4-mapped IPv6 address.
			if addr, err := netip.ParseAddr(a.Value); err != nil || addr.Zone() != "" || addr.Is4In6() {
				errs = append(errs, field.Invalid(p, "object", MsgResolverIP))
			}
		case v1alpha2.DNSResolverHostnameType:
			if !resolverHostnameRE.MatchString(a.Value) {
				errs = append(errs, field.Invalid(p, "object", MsgResolverHostname))
			}
		}
	}
	return errs
}

// resolverHostnameRE is the CRD's rule for a Hostname resolver address.
var resolverHostnameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?([.][a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$`)

func gatewayOverrides(path *field.Path, o *v1alpha2.GatewayOverrides) field.ErrorList {
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	fields := path.Child("fields")
	if len(o.Fields) > maxOverrideFields {
		errs = append(errs, field.TooMany(fields, len(o.Fields), maxOverrideFields))
	}
	for i, f := range o.Fields {
		errs = append(errs, enum(fields.Index(i), string(f), string(v1alpha2.OverrideImages), string(v1alpha2.OverrideService),
			string(v1alpha2.OverrideRewriteClientIP), string(v1alpha2.OverrideDisableBaseHeaders), string(v1alpha2.OverrideScheduling),
			string(v1alpha2.OverrideVolumes), string(v1alpha2.OverrideHostPorts), string(v1alpha2.OverrideLifecycle), string(v1alpha2.OverridePatches))...)
	}
	errs = append(errs, unique(fields, o.Fields)...)
	keys := path.Child("infrastructureKeys")
	if len(o.InfrastructureKeys) > maxInfrastructureKeys {
		errs = append(errs, field.TooMany(keys, len(o.InfrastructureKeys), maxInfrastructureKeys))
	}
	for i, k := range o.InfrastructureKeys {
		errs = append(errs, stringField(keys.Index(i), k, 0, maxInfrastructureKeyLen, infrastructureKeyRE)...)
	}
	return append(errs, unique(keys, o.InfrastructureKeys)...)
}

// unique refuses a value listed twice in a list the CRD declares a set,
// with the API server's message.
func unique[T comparable](path *field.Path, list []T) field.ErrorList {
	seen := map[T]bool{}
	for i, v := range list {
		if seen[v] {
			return field.ErrorList{field.Duplicate(path.Index(i), v)}
		}
		seen[v] = true
	}
	return nil
}

func deployment(path *field.Path, d *v1alpha2.DeploymentSpec) field.ErrorList {
	var errs field.ErrorList
	if d.Replicas != nil {
		errs = append(errs, intRange(path.Child("replicas"), int64(*d.Replicas), 0, maxReplicas)...)
	}
	errs = append(errs, autoscaling(path.Child("autoscaling"), d.Autoscaling)...)
	errs = append(errs, podDisruptionBudget(path.Child("podDisruptionBudget"), d.PodDisruptionBudget)...)
	if d.Autoscaling != nil {
		errs = append(errs, hpaMetrics(path.Child("autoscaling", "metrics"), d.Autoscaling.Metrics)...)
	}
	return append(errs, podSettings(path, d)...)
}

// podSettings checks the settings a Deployment and a DaemonSet share.
func podSettings(path *field.Path, d *v1alpha2.DeploymentSpec) field.ErrorList {
	errs := container(path.Child("container"), d.Container)
	errs = append(errs, nginxContainer(path.Child("container"), d.Container)...)
	errs = append(errs, patches(path.Child("patches"), d.Patches)...)
	if p := d.Pod; p != nil {
		errs = append(errs, scheduling(path.Child("pod"), p)...)
		if g := p.TerminationGracePeriodSeconds; g != nil {
			errs = append(errs, intRange(path.Child("pod", "terminationGracePeriodSeconds"), *g, 0, maxTerminationGraceSecs)...)
		}
		errs = append(errs, topologySpread(path.Child("pod", "topologySpreadConstraints"), p.TopologySpreadConstraints)...)
		secrets := path.Child("pod", "imagePullSecrets")
		if len(p.ImagePullSecrets) > maxImagePullSecrets {
			errs = append(errs, field.TooMany(secrets, len(p.ImagePullSecrets), maxImagePullSecrets))
		}
		for i, s := range p.ImagePullSecrets {
			errs = append(errs, DNS1123Subdomain(secrets.Index(i).Child("name"), s.Name)...)
		}
	}
	if w := d.WAFContainers; w != nil {
		errs = append(errs, container(path.Child("wafContainers", "enforcer"), w.Enforcer)...)
		errs = append(errs, container(path.Child("wafContainers", "configManager"), w.ConfigManager)...)
		errs = append(errs, wafContainers(path.Child("wafContainers"), w)...)
	}
	return errs
}

func container(path *field.Path, c *v1alpha2.ContainerSpec) field.ErrorList {
	if c == nil || c.Image == nil {
		return nil
	}
	var errs field.ErrorList
	img := path.Child("image")
	if c.Image.Repository != nil {
		errs = append(errs, stringField(img.Child("repository"), *c.Image.Repository, 1, maxImageRepositoryLen, imageRepositoryRE)...)
	}
	if c.Image.Tag != nil {
		errs = append(errs, stringField(img.Child("tag"), *c.Image.Tag, 1, maxImageTagLen, imageTagRE)...)
	}
	if c.Image.PullPolicy != nil {
		errs = append(errs, enum(img.Child("pullPolicy"), string(*c.Image.PullPolicy), "Always", "IfNotPresent", "Never")...)
	}
	return errs
}

func service(spec *field.Path, family *v1alpha2.IPFamily, svc *v1alpha2.ServiceSpec) field.ErrorList {
	path := spec.Child("kubernetes", "service")
	var errs field.ErrorList
	lb := true
	if svc.Type != nil {
		errs = append(errs, enum(path.Child("type"), string(*svc.Type), "ClusterIP", "NodePort", "LoadBalancer")...)
		lb = *svc.Type == corev1.ServiceTypeLoadBalancer
	}
	if svc.ExternalTrafficPolicy != nil {
		errs = append(errs, enum(path.Child("externalTrafficPolicy"), string(*svc.ExternalTrafficPolicy), "Cluster", "Local")...)
		if svc.Type != nil && *svc.Type == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Invalid(path, "object", MsgTrafficPolicyType))
		}
	}
	if ip := svc.LoadBalancerIP; ip != nil {
		if !lb {
			errs = append(errs, field.Invalid(path, "object", MsgLBIPType))
		}
		if len(*ip) > maxLBIPLen {
			errs = append(errs, field.TooLong(path.Child("loadBalancerIP"), *ip, maxLBIPLen))
		}
		// As CEL's isIP: no zone, no IPv4-mapped IPv6 address.
		addr, err := netip.ParseAddr(*ip)
		switch {
		case err != nil || addr.Zone() != "" || addr.Is4In6():
			errs = append(errs, field.Invalid(path.Child("loadBalancerIP"), *ip, MsgLBIPNotIP))
		case family != nil && *family == v1alpha2.IPFamilyIPv4 && !addr.Is4():
			errs = append(errs, field.Invalid(spec, "object", MsgLBIPNotIPv4))
		case family != nil && *family == v1alpha2.IPFamilyIPv6 && addr.Is4():
			errs = append(errs, field.Invalid(spec, "object", MsgLBIPNotIPv6))
		}
	}
	errs = append(errs, serviceExposure(path, svc)...)
	errs = append(errs, patches(path.Child("patches"), svc.Patches)...)
	if r := svc.LoadBalancerSourceRanges; r != nil {
		if !lb {
			errs = append(errs, field.Invalid(path, "object", MsgLBRangesType))
		}
		if len(r) > maxSourceRanges {
			errs = append(errs, field.TooMany(path.Child("loadBalancerSourceRanges"), len(r), maxSourceRanges))
		}
		ranges := path.Child("loadBalancerSourceRanges")
		for i, c := range r {
			if len(c) > maxSourceRangeLen {
				errs = append(errs, field.TooLong(ranges.Index(i), c, maxSourceRangeLen))
			}
		}
		// As CEL's isCIDR: no IPv4-mapped IPv6 prefix (::ffff:10.0.0.0/104).
		for _, c := range r {
			if p, err := netip.ParsePrefix(c); err != nil || p.Addr().Is4In6() {
				errs = append(errs, field.Invalid(ranges, c, MsgLBRangesNotCIDR))
				break
			}
		}
	}
	return errs
}

// enum checks a value against the allowed ones, with the API server's message.
func enum(path *field.Path, v string, allowed ...string) field.ErrorList {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	return field.ErrorList{field.NotSupported(path, v, shown)}
}
