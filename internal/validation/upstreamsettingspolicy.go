package validation

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// HashMethodKeyPattern is the pattern of UpstreamSettingsPolicy's
// hashMethodKey (NGINX Gateway Fabric's).
const HashMethodKeyPattern = `^\$[a-z_]+$`

// Messages of UpstreamSettingsPolicy's rules, identical to the CRD's CEL
// messages (the targetRefs ones and the hash rule are NGINX Gateway
// Fabric's).
const (
	MsgUpstreamTargetKind    = "TargetRefs Kind must be: Service"
	MsgUpstreamTargetGroup   = "TargetRefs Group must be core"
	MsgUpstreamTargetUnique  = "TargetRef Name must be unique"
	MsgHashNeedsKey          = "hashMethodKey is required when loadBalancingMethod is 'hash' or 'hash consistent'"
	MsgUpstreamZoneTooSmall  = "zoneSize must be at least 32k: NGINX refuses an upstream zone smaller than 8 memory pages"
	MsgUpstreamZoneTooLarge  = "zoneSize must be at most 1g: NGINX maps the zone of every upstream of the Service in shared memory"
	MsgHashMethodKeyVariable = "hashMethodKey may only be one of $binary_remote_addr, $remote_addr, $remote_user, $server_name, $host, $scheme, $request_method, $uri, $request_uri, $args, $server_port, $http_<name>, $arg_<name> and $cookie_<name>"
)

// Limits of UpstreamSettingsPolicy's values.
const (
	// MaxUpstreamKeepalive is the most idle keep-alive connections a policy
	// may keep per upstream and worker: NGINX allocates each one's slot when
	// it reads the configuration (10,000,000 took 1.5 GB and 4 s of
	// nginx -t; max int32 fails it).
	MaxUpstreamKeepalive = 4096
	// MaxHashMethodKeyLength is the CRD's maxLength of hashMethodKey; it
	// bounds the cost of its CEL rule.
	MaxHashMethodKeyLength = 256
)

// LoadBalancingMethods are the values of loadBalancingMethod; the
// least_time ones need NGINX Plus.
var LoadBalancingMethods = []string{
	"round_robin", "least_conn", "ip_hash", "hash", "hash consistent", "random", "random two",
	"random two least_conn", "random two least_time=header", "random two least_time=last_byte",
	"least_time header", "least_time last_byte", "least_time header inflight", "least_time last_byte inflight",
}

// UpstreamSettingsPolicy re-checks an UpstreamSettingsPolicy against its CRD's rules.
func UpstreamSettingsPolicy(p *v1alpha1.UpstreamSettingsPolicy) field.ErrorList {
	spec := field.NewPath("spec")
	s := p.Spec
	errs := serviceTargetRefs(spec.Child("targetRefs"), s.TargetRefs)
	if z := s.ZoneSize; z != nil {
		errs = append(errs, zoneSize(spec.Child("zoneSize"), string(*z), MsgUpstreamZoneTooSmall, MsgUpstreamZoneTooLarge)...)
	}
	if k := s.KeepAlive; k != nil {
		path := spec.Child("keepAlive")
		if k.Connections != nil {
			errs = append(errs, intRange(path.Child("connections"), int64(*k.Connections), 0, MaxUpstreamKeepalive)...)
		}
		if k.Requests != nil {
			errs = append(errs, intRange(path.Child("requests"), int64(*k.Requests), 0, 1<<31-1)...)
		}
		errs = append(errs, duration(path.Child("time"), k.Time)...)
		errs = append(errs, duration(path.Child("timeout"), k.Timeout)...)
	}
	if m := s.LoadBalancingMethod; m != nil {
		errs = append(errs, enum(spec.Child("loadBalancingMethod"), string(*m), LoadBalancingMethods...)...)
		if (*m == "hash" || *m == "hash consistent") && s.HashMethodKey == nil {
			errs = append(errs, field.Invalid(spec, "object", MsgHashNeedsKey))
		}
	}
	if k := s.HashMethodKey; k != nil {
		path := spec.Child("hashMethodKey")
		if len(*k) > MaxHashMethodKeyLength {
			errs = append(errs, field.TooLong(path, string(*k), MaxHashMethodKeyLength))
		}
		// The API server runs the variables rule whatever the pattern says,
		// and a key outside the pattern is no allowed variable: it reports
		// both.
		e := matches(path, string(*k), hashMethodKeyRE)
		errs = append(errs, e...)
		if e != nil || !RateLimitKeyVariable(string(*k)[1:]) {
			errs = append(errs, field.Invalid(path, string(*k), MsgHashMethodKeyVariable))
		}
	}
	return errs
}

var hashMethodKeyRE = regexp.MustCompile(HashMethodKeyPattern)

// serviceTargetRefs checks the targetRefs of a policy on Services: 1 to 16
// entries, kind Service, group "" or core, each name once.
func serviceTargetRefs(path *field.Path, refs []gatewayv1.LocalPolicyTargetReference) field.ErrorList {
	return targetRefList(path, refs, targetRules{
		kind:  func(r gatewayv1.LocalPolicyTargetReference) bool { return r.Kind == "Service" },
		group: func(r gatewayv1.LocalPolicyTargetReference) bool { return r.Group == "" || r.Group == "core" },
		key:   func(r gatewayv1.LocalPolicyTargetReference) string { return string(r.Name) },
		msgs:  [3]string{MsgUpstreamTargetKind, MsgUpstreamTargetGroup, MsgUpstreamTargetUnique},
	})
}
