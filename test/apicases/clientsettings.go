package apicases

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/validation"
)

// csp is a ClientSettingsPolicy on the Gateway gw, changed by mutate.
func csp(mutate func(*v1alpha1.ClientSettingsPolicySpec)) *v1alpha1.ClientSettingsPolicy {
	p := &v1alpha1.ClientSettingsPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec:       v1alpha1.ClientSettingsPolicySpec{TargetRef: target("Gateway", "gw")},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	return p
}

// cspTarget is a ClientSettingsPolicy with this targetRef.
func cspTarget(r gatewayv1.LocalPolicyTargetReference) *v1alpha1.ClientSettingsPolicy {
	return csp(func(s *v1alpha1.ClientSettingsPolicySpec) { s.TargetRef = r })
}

// cspBody is a ClientSettingsPolicy with these body settings; empty ones are unset.
func cspBody(maxSize, bufferSize, timeout string) *v1alpha1.ClientSettingsPolicy {
	return csp(func(s *v1alpha1.ClientSettingsPolicySpec) {
		b := &v1alpha1.ClientBody{}
		if maxSize != "" {
			b.MaxSize = ptr(v1alpha1.ByteSize(maxSize))
		}
		if bufferSize != "" {
			b.BufferSize = ptr(v1alpha1.ByteSize(bufferSize))
		}
		if timeout != "" {
			b.Timeout = ptr(v1alpha1.Duration(timeout))
		}
		s.Body = b
	})
}

// cspKeepAlive is a ClientSettingsPolicy with these keep-alive settings.
func cspKeepAlive(k v1alpha1.ClientKeepAlive) *v1alpha1.ClientSettingsPolicy {
	return csp(func(s *v1alpha1.ClientSettingsPolicySpec) { s.KeepAlive = &k })
}

// cspTimeout is a ClientSettingsPolicy with this keepAlive.timeout; empty values are unset.
func cspTimeout(server, header string) *v1alpha1.ClientSettingsPolicy {
	t := &v1alpha1.ClientKeepAliveTimeout{}
	if server != "" {
		t.Server = ptr(v1alpha1.Duration(server))
	}
	if header != "" {
		t.Header = ptr(v1alpha1.Duration(header))
	}
	return cspKeepAlive(v1alpha1.ClientKeepAlive{Timeout: t})
}

func duration(s string) *v1alpha1.Duration { return ptr(v1alpha1.Duration(s)) }

func clientSettingsCases() []Case {
	const (
		ref  = "spec.targetRef"
		body = "spec.body"
		ka   = "spec.keepAlive"
	)
	sizePattern := fmt.Sprintf("should match '%s'", validation.ByteSizePattern)
	durationPattern := fmt.Sprintf("should match '%s'", validation.DurationPattern)
	badGroup := target("Gateway", "gw")
	badGroup.Group = "example.com"
	cs := []Case{
		// The manifest of NGINX Gateway Fabric's documentation, every field set.
		{Name: "ClientSettingsPolicy: every field", Object: csp(func(s *v1alpha1.ClientSettingsPolicySpec) {
			s.Body = &v1alpha1.ClientBody{
				MaxSize:    ptr(v1alpha1.ByteSize("10m")),
				BufferSize: ptr(v1alpha1.ByteSize("16k")),
				Timeout:    duration("30s"),
			}
			s.KeepAlive = &v1alpha1.ClientKeepAlive{
				Requests:   ptr(int32(100)),
				Time:       duration("5m"),
				Timeout:    &v1alpha1.ClientKeepAliveTimeout{Server: duration("2m"), Header: duration("1m")},
				MinTimeout: duration("5s"),
			}
		})},
		{Name: "ClientSettingsPolicy: no settings", Object: csp(nil)},
		{Name: "ClientSettingsPolicy: HTTPRoute target", Object: cspTarget(target("HTTPRoute", "r"))},
		{Name: "ClientSettingsPolicy: GRPCRoute target", Object: cspTarget(target("GRPCRoute", "r"))},
		{Name: "ClientSettingsPolicy: Service target", Object: cspTarget(target("Service", "svc")), Field: ref, Message: validation.MsgTargetRefKind},
		{Name: "ClientSettingsPolicy: TCPRoute target", Object: cspTarget(target("TCPRoute", "r")), Field: ref, Message: validation.MsgTargetRefKind},
		{Name: "ClientSettingsPolicy: wrong target group", Object: cspTarget(badGroup), Field: ref, Message: validation.MsgTargetRefGroup},
		{Name: "ClientSettingsPolicy: target name of 253 characters", Object: cspTarget(target("Gateway", strings.Repeat("a", 253)))},
		{Name: "ClientSettingsPolicy: target name of 254 characters", Object: cspTarget(target("Gateway", strings.Repeat("a", 254))), Field: ref + ".name", Message: "may not be more than 253 bytes"},
		{Name: "ClientSettingsPolicy: empty target name", Object: cspTarget(target("Gateway", "")), Field: ref + ".name", Message: "should be at least 1 chars long"},

		{Name: "ClientSettingsPolicy: requests 0", Object: cspKeepAlive(v1alpha1.ClientKeepAlive{Requests: ptr(int32(0))})},
		{Name: "ClientSettingsPolicy: requests -1", Object: cspKeepAlive(v1alpha1.ClientKeepAlive{Requests: ptr(int32(-1))}), Field: ka + ".requests", Message: "should be greater than or equal to 0"},

		{Name: "ClientSettingsPolicy: timeout server only", Object: cspTimeout("60s", "")},
		{Name: "ClientSettingsPolicy: timeout server 0 (keep-alive off)", Object: cspTimeout("0", "")},
		{Name: "ClientSettingsPolicy: timeout server 500ms", Object: cspTimeout("500ms", "")},
		{Name: "ClientSettingsPolicy: header 5s with server", Object: cspTimeout("10s", "5s")},
		{Name: "ClientSettingsPolicy: header 5 with server", Object: cspTimeout("10s", "5")},
		{Name: "ClientSettingsPolicy: header 1h with server", Object: cspTimeout("2h", "1h")},
		{Name: "ClientSettingsPolicy: header without server", Object: cspTimeout("", "5s"), Field: ka + ".timeout", Message: validation.MsgHeaderNeedsServer},
		{Name: "ClientSettingsPolicy: header 500ms", Object: cspTimeout("10s", "500ms"), Field: ka + ".timeout.header", Message: validation.MsgHeaderWholeSeconds},
		{Name: "ClientSettingsPolicy: header 0ms", Object: cspTimeout("10s", "0ms"), Field: ka + ".timeout.header", Message: validation.MsgHeaderWholeSeconds},
		{Name: "ClientSettingsPolicy: header 12345ms (pattern)", Object: cspTimeout("10s", "12345ms"), Field: ka + ".timeout.header", Message: durationPattern},
		{Name: "ClientSettingsPolicy: header 12345ms (milliseconds)", Object: cspTimeout("10s", "12345ms"), Field: ka + ".timeout.header", Message: validation.MsgHeaderWholeSeconds},
		{Name: "ClientSettingsPolicy: header 500ms without server", Object: cspTimeout("", "500ms"), Field: ka + ".timeout", Message: validation.MsgHeaderNeedsServer},
		{Name: "ClientSettingsPolicy: server 5d", Object: cspTimeout("5d", ""), Field: ka + ".timeout.server", Message: durationPattern},
		{Name: "ClientSettingsPolicy: time 12345s", Object: cspKeepAlive(v1alpha1.ClientKeepAlive{Time: duration("12345s")}), Field: ka + ".time", Message: durationPattern},
		{Name: "ClientSettingsPolicy: minTimeout 5d", Object: cspKeepAlive(v1alpha1.ClientKeepAlive{MinTimeout: duration("5d")}), Field: ka + ".minTimeout", Message: durationPattern},
		{Name: "ClientSettingsPolicy: minTimeout 100ms", Object: cspKeepAlive(v1alpha1.ClientKeepAlive{MinTimeout: duration("100ms")})},
	}
	for _, s := range []string{"0", "1", "9999", "8k", "10m", "1g", "9999g"} {
		cs = append(cs, Case{Name: fmt.Sprintf("ClientSettingsPolicy: size %s accepted", s), Object: cspBody(s, s, "")})
	}
	for _, s := range []string{"10x", "12345k", "1t", "12345", "1K", "1M", "1G", "k", "1kb", "1.5k", "-1", "8k;", "8 k", "8k\n"} {
		cs = append(cs, Case{Name: fmt.Sprintf("ClientSettingsPolicy: maxSize %q rejected", s), Object: cspBody(s, "", ""), Field: body + ".maxSize", Message: sizePattern})
	}
	cs = append(cs,
		Case{Name: "ClientSettingsPolicy: empty maxSize rejected", Object: csp(func(s *v1alpha1.ClientSettingsPolicySpec) {
			s.Body = &v1alpha1.ClientBody{MaxSize: ptr(v1alpha1.ByteSize(""))}
		}), Field: body + ".maxSize", Message: sizePattern},
		Case{Name: `ClientSettingsPolicy: bufferSize "1t" rejected`, Object: cspBody("", "1t", ""), Field: body + ".bufferSize", Message: sizePattern},
	)
	for _, d := range []string{"0", "30", "9999", "500ms", "60s", "5m", "1h", "9999h"} {
		cs = append(cs, Case{Name: fmt.Sprintf("ClientSettingsPolicy: duration %s accepted", d), Object: cspBody("", "", d)})
	}
	for _, d := range []string{"5d", "12345s", "12345", "1.5s", "-1s", "1S", "1m30s", "1us", "s", "5s;", "5 s"} {
		cs = append(cs, Case{Name: fmt.Sprintf("ClientSettingsPolicy: body timeout %q rejected", d), Object: cspBody("", "", d), Field: body + ".timeout", Message: durationPattern})
	}
	cs = append(cs, Case{Name: "ClientSettingsPolicy: empty body timeout rejected", Object: csp(func(s *v1alpha1.ClientSettingsPolicySpec) {
		s.Body = &v1alpha1.ClientBody{Timeout: duration("")}
	}), Field: body + ".timeout", Message: durationPattern})
	return cs
}
