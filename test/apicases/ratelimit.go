package apicases

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// rlp is a RateLimitPolicy on the Gateway gw, changed by mutate.
func rlp(mutate func(*v1alpha1.RateLimitPolicySpec)) *v1alpha1.RateLimitPolicy {
	p := &v1alpha1.RateLimitPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec:       v1alpha1.RateLimitPolicySpec{TargetRefs: gatewayTarget()},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

// rlpRules is a RateLimitPolicy on the Gateway gw with these local rules.
func rlpRules(rules ...v1alpha1.RateLimitRule) *v1alpha1.RateLimitPolicy {
	return rlp(func(s *v1alpha1.RateLimitPolicySpec) {
		s.RateLimit = &v1alpha1.RateLimit{Local: &v1alpha1.LocalRateLimit{Rules: rules}}
	})
}

// rlpRule is a RateLimitPolicy with one rule.
func rlpRule(r v1alpha1.RateLimitRule) *v1alpha1.RateLimitPolicy { return rlpRules(r) }

// rlpTargets is a RateLimitPolicy with these targetRefs and one rule.
func rlpTargets(refs []gatewayv1.LocalPolicyTargetReference) *v1alpha1.RateLimitPolicy {
	p := rlpRule(rateRule("10r/s", "$binary_remote_addr"))
	p.Spec.TargetRefs = refs
	return p
}

// rlpLimit is a RateLimitPolicy with these settings beside one rule.
func rlpLimit(mutate func(*v1alpha1.RateLimit)) *v1alpha1.RateLimitPolicy {
	p := rlpRule(rateRule("10r/s", "$binary_remote_addr"))
	mutate(p.Spec.RateLimit)
	return p
}

// rateRule is a rule with this rate and key.
func rateRule(rate, key string) v1alpha1.RateLimitRule {
	return v1alpha1.RateLimitRule{Rate: v1alpha1.Rate(rate), Key: key}
}

// zoneRule is a rule with this zoneSize.
func zoneRule(size string) v1alpha1.RateLimitRule {
	r := rateRule("10r/s", "$binary_remote_addr")
	r.ZoneSize = ptr(v1alpha1.ByteSize(size))
	return r
}

func rateLimitCases() []Case {
	const (
		rl   = "spec.rateLimit"
		rule = "spec.rateLimit.local.rules[0]"
	)
	g := func(kind, name string) gatewayv1.LocalPolicyTargetReference { return target(kind, name) }
	badGroup := g("Gateway", "gw")
	badGroup.Group = "example.com"
	ratePattern := fmt.Sprintf("should match '%s'", validation.RatePattern)
	keyPattern := fmt.Sprintf("should match '%s'", validation.RateLimitKeyPattern)
	sizePattern := fmt.Sprintf("should match '%s'", validation.ByteSizePattern)
	rules := func(n int, key string) *v1alpha1.RateLimitPolicy {
		rs := make([]v1alpha1.RateLimitRule, n)
		for i := range rs {
			rs[i] = rateRule(fmt.Sprintf("%dr/s", i+1), key)
		}
		return rlpRules(rs...)
	}
	// A key of 256 characters that is nothing but variables: the most work
	// for the variables rule, 16 times over.
	allVariables := strings.Repeat("$arg_a", 42) + "$uri"
	cs := []Case{
		// A manifest as NGINX Gateway Fabric's documentation writes them, every field set.
		{Name: "RateLimitPolicy: every field", Object: rlp(func(s *v1alpha1.RateLimitPolicySpec) {
			s.RateLimit = &v1alpha1.RateLimit{
				Local: &v1alpha1.LocalRateLimit{Rules: []v1alpha1.RateLimitRule{
					{ZoneSize: ptr(v1alpha1.ByteSize("10m")), Delay: ptr(int32(5)), Burst: ptr(int32(10)), Rate: "10r/s", Key: "$binary_remote_addr"},
					{NoDelay: ptr(true), Burst: ptr(int32(20)), Rate: "100r/m", Key: "$http_x_api_key"},
				}},
				DryRun:     ptr(false),
				LogLevel:   ptr(v1alpha1.RateLimitLogLevelWarn),
				RejectCode: ptr(int32(429)),
			}
		})},
		{Name: "RateLimitPolicy: no rate limit", Object: rlp(nil)},
		{Name: "RateLimitPolicy: no rules", Object: rlp(func(s *v1alpha1.RateLimitPolicySpec) {
			s.RateLimit = &v1alpha1.RateLimit{Local: &v1alpha1.LocalRateLimit{}, DryRun: ptr(true)}
		})},

		// targetRefs, with NGINX Gateway Fabric's messages.
		{Name: "RateLimitPolicy: HTTPRoute and GRPCRoute", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("HTTPRoute", "a"), g("GRPCRoute", "a")})},
		{Name: "RateLimitPolicy: two Gateways", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("Gateway", "a"), g("Gateway", "b")})},
		{Name: "RateLimitPolicy: 16 targets", Object: rlpTargets(manyTargets(16))},
		{Name: "RateLimitPolicy: 17 targets", Object: rlpTargets(manyTargets(17)), Field: targets, Message: "must have at most 16 items"},
		{Name: "RateLimitPolicy: no targets", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{}), Field: targets, Message: "should have at least 1 items"},
		{Name: "RateLimitPolicy: Service target", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("Service", "svc")}), Field: targets, Message: validation.MsgTargetRefKind},
		{Name: "RateLimitPolicy: wrong target group", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{badGroup}), Field: targets, Message: validation.MsgRateLimitTargetGroup},
		{Name: "RateLimitPolicy: duplicate target", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("HTTPRoute", "a"), g("HTTPRoute", "a")}), Field: targets, Message: validation.MsgRateLimitTargetUnique},
		{Name: "RateLimitPolicy: Gateway and HTTPRoute mixed", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("Gateway", "gw"), g("HTTPRoute", "r")}), Field: targets, Message: validation.MsgRateLimitTargetMixed},
		{Name: "RateLimitPolicy: GRPCRoute and Gateway mixed", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("GRPCRoute", "r"), g("Gateway", "gw")}), Field: targets, Message: validation.MsgRateLimitTargetMixed},
		{Name: "RateLimitPolicy: target name of 253 characters", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("Gateway", strings.Repeat("a", 253))})},
		{Name: "RateLimitPolicy: target name of 254 characters", Object: rlpTargets([]gatewayv1.LocalPolicyTargetReference{g("Gateway", strings.Repeat("a", 254))}), Field: targets + "[0].name", Message: "may not be more than 253 bytes"},

		// rateLimit's own fields.
		{Name: "RateLimitPolicy: rejectCode 400", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.RejectCode = ptr(int32(400)) })},
		{Name: "RateLimitPolicy: rejectCode 599", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.RejectCode = ptr(int32(599)) })},
		{Name: "RateLimitPolicy: rejectCode 399", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.RejectCode = ptr(int32(399)) }), Field: rl + ".rejectCode", Message: "should be greater than or equal to 400"},
		{Name: "RateLimitPolicy: rejectCode 600", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.RejectCode = ptr(int32(600)) }), Field: rl + ".rejectCode", Message: "should be less than or equal to 599"},
		{Name: "RateLimitPolicy: logLevel debug", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.LogLevel = ptr(v1alpha1.RateLimitLogLevel("debug")) }), Field: rl + ".logLevel", Message: `Unsupported value: "debug"`},
		{Name: "RateLimitPolicy: logLevel Warn", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.LogLevel = ptr(v1alpha1.RateLimitLogLevel("Warn")) }), Field: rl + ".logLevel", Message: `Unsupported value: "Warn"`},
		{Name: "RateLimitPolicy: dryRun true", Object: rlpLimit(func(r *v1alpha1.RateLimit) { r.DryRun = ptr(true) })},

		// rules.
		{Name: "RateLimitPolicy: 16 rules", Object: rules(16, "$binary_remote_addr")},
		{Name: "RateLimitPolicy: 16 rules with keys of 256 characters, all variables", Object: rules(16, allVariables)},
		{Name: "RateLimitPolicy: 17 rules", Object: rules(17, "$binary_remote_addr"), Field: rl + ".local.rules", Message: "must have at most 16 items"},
		{Name: "RateLimitPolicy: delay with noDelay true", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Delay: ptr(int32(5)), NoDelay: ptr(true)}), Field: rule, Message: validation.MsgNoDelayWithDelay},
		{Name: "RateLimitPolicy: delay 0 with noDelay true", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Delay: ptr(int32(0)), NoDelay: ptr(true)}), Field: rule, Message: validation.MsgNoDelayWithDelay},
		{Name: "RateLimitPolicy: delay with noDelay false", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Delay: ptr(int32(5)), NoDelay: ptr(false)})},
		{Name: "RateLimitPolicy: noDelay true, burst 20", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Burst: ptr(int32(20)), NoDelay: ptr(true)})},
		{Name: "RateLimitPolicy: burst 0 and delay 0", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Burst: ptr(int32(0)), Delay: ptr(int32(0))})},
		{Name: "RateLimitPolicy: burst -1", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Burst: ptr(int32(-1))}), Field: rule + ".burst", Message: "should be greater than or equal to 0"},
		{Name: "RateLimitPolicy: delay -1", Object: rlpRule(v1alpha1.RateLimitRule{Rate: "10r/s", Key: "$remote_addr", Delay: ptr(int32(-1))}), Field: rule + ".delay", Message: "should be greater than or equal to 0"},
	}

	// rate: NGF's pattern, and a number NGINX takes.
	for _, r := range []string{"1r/s", "1r/m", "10r/s", "30r/m", "999999999r/s", "999999999r/m"} {
		cs = append(cs, Case{Name: "RateLimitPolicy: rate " + r, Object: rlpRule(rateRule(r, "$binary_remote_addr"))})
	}
	for _, r := range []string{"0r/s", "0r/m", "00r/s", "010r/s", "1000000000r/s", "9999999999r/m", "9999999999999r/s"} {
		cs = append(cs, Case{Name: "RateLimitPolicy: rate " + r, Object: rlpRule(rateRule(r, "$binary_remote_addr")), Field: rule + ".rate", Message: validation.MsgRateRange})
	}
	for _, r := range []string{"", "10", "r/s", "10r/h", "10r/S", "10 r/s", "-1r/s", "1.5r/s", "10rps", "10r/s;"} {
		cs = append(cs, Case{Name: fmt.Sprintf("RateLimitPolicy: rate %q", r), Object: rlpRule(rateRule(r, "$binary_remote_addr")), Field: rule + ".rate", Message: ratePattern})
	}

	cs = append(cs,
		Case{Name: "RateLimitPolicy: rate of 17 characters", Object: rlpRule(rateRule("99999999999999r/s", "$binary_remote_addr")), Field: rule + ".rate", Message: "may not be more than 16 bytes"},
		Case{Name: "RateLimitPolicy: zoneSize of 17 characters", Object: rlpRule(zoneRule("9999999999999999k")), Field: rule + ".zoneSize", Message: "may not be more than 16 bytes"},
	)

	// zoneSize: ByteSize, from 32k to 1g.
	for _, s := range []string{"32k", "33k", "1m", "10m", "1g", "1024m"} {
		cs = append(cs, Case{Name: "RateLimitPolicy: zoneSize " + s, Object: rlpRule(zoneRule(s))})
	}
	// NGINX maps the zone when it reads its configuration: 9999g fails.
	for _, s := range []string{"2g", "1025m", "9999g"} {
		cs = append(cs, Case{Name: "RateLimitPolicy: zoneSize " + s, Object: rlpRule(zoneRule(s)), Field: rule + ".zoneSize", Message: validation.MsgZoneSizeTooLarge})
	}
	for _, s := range []string{"31k", "0", "0k", "0g", "9999", "1k"} {
		cs = append(cs, Case{Name: "RateLimitPolicy: zoneSize " + s, Object: rlpRule(zoneRule(s)), Field: rule + ".zoneSize", Message: validation.MsgZoneSizeTooSmall})
	}
	for _, s := range []string{"", "32768", "32K", "1M", "1t", "12345k", "10mb", "1.5m"} {
		cs = append(cs, Case{Name: fmt.Sprintf("RateLimitPolicy: zoneSize %q", s), Object: rlpRule(zoneRule(s)), Field: rule + ".zoneSize", Message: sizePattern})
	}

	// key: NGF's pattern, no quotes or backslashes, allowed variables only.
	for _, k := range []string{
		"$binary_remote_addr", "$http_x_api_key", "user:$remote_addr", "$host$uri", "$scheme://$host$request_uri",
		"$request_method-$server_name:$server_port", "$remote_user", "$args", "$arg_page.$cookie_session",
		"$http_X_Api_Key", "tenant-a", "é$remote_addr", strings.Repeat("k", 256),
	} {
		cs = append(cs, Case{Name: fmt.Sprintf("RateLimitPolicy: key %q", k), Object: rlpRule(rateRule("10r/s", k))})
	}
	for _, k := range []string{"$nosuch", "$http_", "$arg_", "$cookie_", "$remote_addrx", "a$request_body", "$1", "$Remote_Addr", "$host$request_id"} {
		cs = append(cs, Case{Name: fmt.Sprintf("RateLimitPolicy: key %q", k), Object: rlpRule(rateRule("10r/s", k)), Field: rule + ".key", Message: validation.MsgKeyVariables})
	}
	for _, k := range []string{`a"b`, `a'b`, `a\b`, `"$host"`, `\$host`} {
		cs = append(cs, Case{Name: fmt.Sprintf("RateLimitPolicy: key %q", k), Object: rlpRule(rateRule("10r/s", k)), Field: rule + ".key", Message: validation.MsgKeyQuotes})
	}
	for _, k := range []string{"", "a b", "a\tb", "a\nb", "a;b", "a{b", "}", "#a", "$", "a$", "${host}", "$-x", "$ host"} {
		cs = append(cs, Case{Name: fmt.Sprintf("RateLimitPolicy: key %q", k), Object: rlpRule(rateRule("10r/s", k)), Field: rule + ".key", Message: keyPattern})
	}
	cs = append(cs,
		Case{Name: "RateLimitPolicy: key of 257 characters", Object: rlpRule(rateRule("10r/s", strings.Repeat("k", 257))), Field: rule + ".key", Message: "may not be more than 256 bytes"},
		Case{Name: "RateLimitPolicy: key of 256 characters, one of two bytes", Object: rlpRule(rateRule("10r/s", "é"+strings.Repeat("k", 255)))},
	)
	return cs
}
