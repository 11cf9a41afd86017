package apicases

import (
	"fmt"
	"math"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// serviceTarget is a targetRef to the Service name, group "" (core).
func serviceTarget(name string) gatewayv1.LocalPolicyTargetReference {
	return gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: gatewayv1.ObjectName(name)}
}

// serviceTargets are n targetRefs to Services of different names.
func serviceTargets(n int) []gatewayv1.LocalPolicyTargetReference {
	refs := make([]gatewayv1.LocalPolicyTargetReference, n)
	for i := range refs {
		refs[i] = serviceTarget(fmt.Sprintf("svc-%d", i))
	}
	return refs
}

// usp is an UpstreamSettingsPolicy on the Service svc, changed by mutate.
func usp(mutate func(*v1alpha1.UpstreamSettingsPolicySpec)) *v1alpha1.UpstreamSettingsPolicy {
	p := &v1alpha1.UpstreamSettingsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: v1alpha1.UpstreamSettingsPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReference{serviceTarget("svc")},
		},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

// uspTargets is an UpstreamSettingsPolicy with these targetRefs.
func uspTargets(refs ...gatewayv1.LocalPolicyTargetReference) *v1alpha1.UpstreamSettingsPolicy {
	if refs == nil {
		refs = []gatewayv1.LocalPolicyTargetReference{}
	}
	return usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) { s.TargetRefs = refs })
}

// uspZone is an UpstreamSettingsPolicy with this zoneSize.
func uspZone(size string) *v1alpha1.UpstreamSettingsPolicy {
	return usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) { s.ZoneSize = ptr(v1alpha1.ByteSize(size)) })
}

// uspKeepAlive is an UpstreamSettingsPolicy with these keep-alive settings.
func uspKeepAlive(k v1alpha1.UpstreamKeepAlive) *v1alpha1.UpstreamSettingsPolicy {
	return usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) { s.KeepAlive = &k })
}

// uspMethod is an UpstreamSettingsPolicy with this loadBalancingMethod and
// hashMethodKey; an empty method or key is unset.
func uspMethod(method, key string) *v1alpha1.UpstreamSettingsPolicy {
	return usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) {
		if method != "" {
			s.LoadBalancingMethod = ptr(v1alpha1.LoadBalancingType(method))
		}
		if key != "" {
			s.HashMethodKey = ptr(v1alpha1.HashMethodKey(key))
		}
	})
}

func upstreamSettingsCases() []Case {
	const (
		zone   = "spec.zoneSize"
		ka     = "spec.keepAlive"
		method = "spec.loadBalancingMethod"
		key    = "spec.hashMethodKey"
	)
	sizePattern := fmt.Sprintf("should match '%s'", validation.ByteSizePattern)
	durationPattern := fmt.Sprintf("should match '%s'", validation.DurationPattern)
	keyPattern := fmt.Sprintf("should match '%s'", validation.HashMethodKeyPattern)
	core := serviceTarget("orders")
	core.Group = "core"
	apps := serviceTarget("orders")
	apps.Group = "apps"

	cs := []Case{
		// Manifests as NGINX Gateway Fabric's documentation writes them.
		{Name: "UpstreamSettingsPolicy: every field", Object: usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) {
			s.TargetRefs = []gatewayv1.LocalPolicyTargetReference{core, serviceTarget("catalog")}
			s.ZoneSize = ptr(v1alpha1.ByteSize("1m"))
			s.KeepAlive = &v1alpha1.UpstreamKeepAlive{
				Connections: ptr(int32(32)),
				Requests:    ptr(int32(1001)),
				Time:        duration("300s"),
				Timeout:     duration("60s"),
			}
			s.LoadBalancingMethod = ptr(v1alpha1.LoadBalancingType("hash consistent"))
			s.HashMethodKey = ptr(v1alpha1.HashMethodKey("$request_uri"))
			s.UseClusterIP = ptr(true)
		})},
		{Name: "UpstreamSettingsPolicy: zone and keepalive on core Services", Object: usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) {
			catalog := serviceTarget("catalog")
			catalog.Group = "core"
			s.TargetRefs = []gatewayv1.LocalPolicyTargetReference{core, catalog}
			s.ZoneSize = ptr(v1alpha1.ByteSize("1m"))
			s.KeepAlive = &v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(32))}
		})},
		{Name: "UpstreamSettingsPolicy: no settings", Object: usp(nil)},
		{Name: "UpstreamSettingsPolicy: useClusterIP false", Object: usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) { s.UseClusterIP = ptr(false) })},

		// targetRefs: Services of the core group, NGINX Gateway Fabric's messages.
		{Name: `UpstreamSettingsPolicy: target group ""`, Object: uspTargets(serviceTarget("orders"))},
		{Name: `UpstreamSettingsPolicy: target group "core"`, Object: uspTargets(core)},
		{Name: "UpstreamSettingsPolicy: 16 targets", Object: uspTargets(serviceTargets(16)...)},
		{Name: "UpstreamSettingsPolicy: no targets", Object: uspTargets(), Field: targets, Message: "should have at least 1 items"},
		{Name: "UpstreamSettingsPolicy: 17 targets", Object: uspTargets(serviceTargets(17)...), Field: targets, Message: "must have at most 16 items"},
		{Name: "UpstreamSettingsPolicy: Gateway target of group core", Object: uspTargets(gatewayv1.LocalPolicyTargetReference{Kind: "Gateway", Name: "gw"}), Field: targets, Message: validation.MsgUpstreamTargetKind},
		{Name: "UpstreamSettingsPolicy: HTTPRoute target (kind)", Object: uspTargets(target("HTTPRoute", "r")), Field: targets, Message: validation.MsgUpstreamTargetKind},
		{Name: "UpstreamSettingsPolicy: HTTPRoute target (group)", Object: uspTargets(target("HTTPRoute", "r")), Field: targets, Message: validation.MsgUpstreamTargetGroup},
		{Name: "UpstreamSettingsPolicy: Service and Gateway", Object: uspTargets(serviceTarget("svc"), gatewayv1.LocalPolicyTargetReference{Kind: "Gateway", Name: "gw"}), Field: targets, Message: validation.MsgUpstreamTargetKind},
		{Name: "UpstreamSettingsPolicy: kind service (lower case)", Object: uspTargets(gatewayv1.LocalPolicyTargetReference{Kind: "service", Name: "svc"}), Field: targets, Message: validation.MsgUpstreamTargetKind},
		{Name: `UpstreamSettingsPolicy: target group "apps"`, Object: uspTargets(apps), Field: targets, Message: validation.MsgUpstreamTargetGroup},
		{Name: "UpstreamSettingsPolicy: Service of the Gateway API group", Object: uspTargets(target("Service", "svc")), Field: targets, Message: validation.MsgUpstreamTargetGroup},
		{Name: "UpstreamSettingsPolicy: duplicate target", Object: uspTargets(serviceTarget("svc"), serviceTarget("svc")), Field: targets, Message: validation.MsgUpstreamTargetUnique},
		{Name: `UpstreamSettingsPolicy: same name, groups "" and "core"`, Object: uspTargets(serviceTarget("orders"), core), Field: targets, Message: validation.MsgUpstreamTargetUnique},
		{Name: "UpstreamSettingsPolicy: target name of 253 characters", Object: uspTargets(serviceTarget(strings.Repeat("a", 253)))},
		{Name: "UpstreamSettingsPolicy: target name of 254 characters", Object: uspTargets(serviceTarget(strings.Repeat("a", 254))), Field: targets + "[0].name", Message: "may not be more than 253 bytes"},
		{Name: "UpstreamSettingsPolicy: empty target name", Object: uspTargets(serviceTarget("")), Field: targets + "[0].name", Message: "should be at least 1 chars long"},

		// zoneSize: its maxLength beside the pattern (past the maxLength, the
		// API server reports the length only).
		{Name: "UpstreamSettingsPolicy: zoneSize of 17 characters", Object: uspZone(strings.Repeat("9", 17)), Field: zone, Message: "may not be more than 16 bytes"},
		{Name: "UpstreamSettingsPolicy: zoneSize of 16 characters", Object: uspZone(strings.Repeat("9", 16)), Field: zone, Message: sizePattern},

		// keepAlive's numbers.
		{Name: "UpstreamSettingsPolicy: connections 0 and requests 0", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(0)), Requests: ptr(int32(0))})},
		{Name: "UpstreamSettingsPolicy: connections 4096 and requests of max int32", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(4096)), Requests: ptr(int32(math.MaxInt32))})},
		// NGINX allocates every connection slot of every upstream when it
		// reads the configuration: 10,000,000 took 1.5 GB and 4 s for
		// nginx -t, max int32 fails it.
		{Name: "UpstreamSettingsPolicy: connections 4097", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(4097))}), Field: ka + ".connections", Message: "should be less than or equal to 4096"},
		{Name: "UpstreamSettingsPolicy: connections of max int32", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(math.MaxInt32))}), Field: ka + ".connections", Message: "should be less than or equal to 4096"},
		{Name: "UpstreamSettingsPolicy: connections -1", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(-1))}), Field: ka + ".connections", Message: "should be greater than or equal to 0"},
		{Name: "UpstreamSettingsPolicy: requests -1", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Requests: ptr(int32(-1))}), Field: ka + ".requests", Message: "should be greater than or equal to 0"},
		{Name: "UpstreamSettingsPolicy: connections of min int32", Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Connections: ptr(int32(math.MinInt32))}), Field: ka + ".connections", Message: "should be greater than or equal to 0"},

		// hash methods need a key; other methods ignore one.
		{Name: "UpstreamSettingsPolicy: hash without hashMethodKey", Object: uspMethod("hash", ""), Field: "spec", Message: validation.MsgHashNeedsKey},
		{Name: "UpstreamSettingsPolicy: hash consistent without hashMethodKey", Object: uspMethod("hash consistent", ""), Field: "spec", Message: validation.MsgHashNeedsKey},
		{Name: "UpstreamSettingsPolicy: hashMethodKey without a method", Object: uspMethod("", "$remote_addr")},
		{Name: "UpstreamSettingsPolicy: hashMethodKey with round_robin", Object: uspMethod("round_robin", "$remote_addr")},
		{Name: "UpstreamSettingsPolicy: hashMethodKey with least_conn", Object: uspMethod("least_conn", "$request_uri")},
		{Name: "UpstreamSettingsPolicy: hashMethodKey with random two least_time=header", Object: uspMethod("random two least_time=header", "$binary_remote_addr")},
		{Name: `UpstreamSettingsPolicy: hash with "$foo"`, Object: uspMethod("hash", "$foo"), Field: key, Message: validation.MsgHashMethodKeyVariable},
		{Name: `UpstreamSettingsPolicy: least_conn with "$foo"`, Object: uspMethod("least_conn", "$foo"), Field: key, Message: validation.MsgHashMethodKeyVariable},
	}

	// zoneSize: a ByteSize from 32k to 1g.
	for _, s := range []string{"32k", "9999k", "1m", "512m", "1024m", "1g"} {
		cs = append(cs, Case{Name: "UpstreamSettingsPolicy: zoneSize " + s, Object: uspZone(s)})
	}
	for _, s := range []string{"0", "1", "9999", "8k", "31k", "0g"} {
		cs = append(cs, Case{Name: "UpstreamSettingsPolicy: zoneSize " + s, Object: uspZone(s), Field: zone, Message: validation.MsgUpstreamZoneTooSmall})
	}
	for _, s := range []string{"1025m", "2g", "9999m", "9999g"} {
		cs = append(cs, Case{Name: "UpstreamSettingsPolicy: zoneSize " + s, Object: uspZone(s), Field: zone, Message: validation.MsgUpstreamZoneTooLarge})
	}
	for _, s := range []string{"1.5m", "10000k", "32768", "1G", "32K", "-1", "1mb", ""} {
		cs = append(cs, Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: zoneSize %q", s), Object: uspZone(s), Field: zone, Message: sizePattern})
	}

	// keepAlive's durations.
	for _, d := range []string{"500ms", "60s", "5m", "1h", "30", "9999h"} {
		cs = append(cs, Case{Name: "UpstreamSettingsPolicy: time and timeout " + d, Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Time: duration(d), Timeout: duration(d)})})
	}
	for _, d := range []string{"1d", "10000s", "", "1.5s", "1m30s", "-1s", "5S"} {
		cs = append(cs,
			Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: timeout %q", d), Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Timeout: duration(d)}), Field: ka + ".timeout", Message: durationPattern},
		)
	}
	for _, d := range []string{"1d", ""} {
		cs = append(cs,
			Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: time %q", d), Object: uspKeepAlive(v1alpha1.UpstreamKeepAlive{Time: duration(d)}), Field: ka + ".time", Message: durationPattern},
		)
	}

	// loadBalancingMethod: every method of the enum, the least_time ones
	// (NGINX Plus) included: Gatewall refuses those in the status only.
	for _, m := range []string{
		"round_robin", "least_conn", "ip_hash", "hash", "hash consistent", "random", "random two",
		"random two least_conn", "random two least_time=header", "random two least_time=last_byte",
		"least_time header", "least_time last_byte", "least_time header inflight", "least_time last_byte inflight",
	} {
		cs = append(cs, Case{Name: "UpstreamSettingsPolicy: method " + m, Object: uspMethod(m, "$remote_addr")})
	}
	for _, m := range []string{"least_connections", "Round_Robin", "least_time"} {
		cs = append(cs, Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: method %q", m), Object: uspMethod(m, ""), Field: method, Message: fmt.Sprintf("Unsupported value: %q", m)})
	}
	cs = append(cs, Case{Name: "UpstreamSettingsPolicy: empty method", Object: usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) {
		s.LoadBalancingMethod = ptr(v1alpha1.LoadBalancingType(""))
	}), Field: method, Message: `Unsupported value: ""`})

	// hashMethodKey: NGINX Gateway Fabric's pattern, and allowed variables only.
	for _, k := range []string{
		"$remote_addr", "$binary_remote_addr", "$request_uri", "$http_x_user", "$arg_id", "$cookie_session",
		"$host", "$server_port", "$http__",
	} {
		cs = append(cs, Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: hashMethodKey %q", k), Object: uspMethod("hash", k)})
	}
	for _, k := range []string{"$request_id", "$foo", "$http_", "$arg_", "$remote_addrx", "$_"} {
		cs = append(cs, Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: hashMethodKey %q", k), Object: uspMethod("hash", k), Field: key, Message: validation.MsgHashMethodKeyVariable})
	}
	// A key outside the pattern breaks the variables rule too: the API
	// server reports both.
	for _, k := range []string{"remote_addr", "$Remote", "$request-id", "$1", "$http_X_User"} {
		cs = append(cs,
			Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: hashMethodKey %q (pattern)", k), Object: uspMethod("hash", k), Field: key, Message: keyPattern},
			Case{Name: fmt.Sprintf("UpstreamSettingsPolicy: hashMethodKey %q (variables)", k), Object: uspMethod("hash", k), Field: key, Message: validation.MsgHashMethodKeyVariable},
		)
	}
	cs = append(cs, Case{Name: "UpstreamSettingsPolicy: empty hashMethodKey", Object: usp(func(s *v1alpha1.UpstreamSettingsPolicySpec) {
		s.LoadBalancingMethod = ptr(v1alpha1.LoadBalancingType("hash"))
		s.HashMethodKey = ptr(v1alpha1.HashMethodKey(""))
	}), Field: key, Message: keyPattern})
	return cs
}
