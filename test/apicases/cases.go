// Package apicases is the table of objects that Gatewall's CRDs must accept or
// reject. The same table runs against the real API server (envtest, the truth
// about CEL and schema rules) and against the Go re-validation in
// internal/validation, so the two layers cannot drift apart.
package apicases

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// Case is one object and the verdict on it.
type Case struct {
	// Name describes the case.
	Name string
	// Object is the object to create; its name is set by the runner.
	Object client.Object
	// Field is the path of the field the rejection is about; empty when the
	// object must be accepted.
	Field string
	// Message must appear in the API server's rejection and in the Go
	// validation error for Field.
	Message string
	// Stored, if set, checks the object as the API server stored it (defaults).
	Stored func(client.Object) error
}

// Accepted says whether the object must be accepted.
func (c Case) Accepted() bool { return c.Field == "" }

const (
	targets = "spec.targetRefs"
	buf     = "spec.buffering"
)

// All returns every case.
func All() []Case {
	var cs []Case
	cs = append(cs, targetCases()...)
	cs = append(cs, sizeCases()...)
	cs = append(cs, bufferingCases()...)
	cs = append(cs, wafCases()...)
	cs = append(cs, destinationCases()...)
	cs = append(cs, nginxProxyCases()...)
	cs = append(cs, dnsResolverCases()...)
	cs = append(cs, overrideCases()...)
	cs = append(cs, nginxFieldCases()...)
	cs = append(cs, scalingCases()...)
	cs = append(cs, daemonSetCases()...)
	cs = append(cs, podCases()...)
	cs = append(cs, spreadCases()...)
	cs = append(cs, podShapingCases()...)
	cs = append(cs, clientSettingsCases()...)
	cs = append(cs, rateLimitCases()...)
	cs = append(cs, upstreamSettingsCases()...)
	cs = append(cs, limitCases()...)
	cs = append(cs, snippetsCases()...)
	cs = append(cs, authenticationFilterCases()...)
	return cs
}

// targetCases run the targetRefs rules on both policy kinds.
func targetCases() []Case {
	withTargets := map[string]func([]gatewayv1.LocalPolicyTargetReference) client.Object{
		"ProxySettingsPolicy": func(r []gatewayv1.LocalPolicyTargetReference) client.Object {
			return psp(func(s *v1alpha1.ProxySettingsPolicySpec) { s.TargetRefs = r })
		},
		"WAFGatewayBindingPolicy": func(r []gatewayv1.LocalPolicyTargetReference) client.Object {
			return waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) { s.TargetRefs = r })
		},
	}
	var cs []Case
	for _, kind := range []string{"ProxySettingsPolicy", "WAFGatewayBindingPolicy"} {
		mk := withTargets[kind]
		g := func(kind, name string) gatewayv1.LocalPolicyTargetReference { return target(kind, name) }
		badGroup := g("Gateway", "gw")
		badGroup.Group = "example.com"
		cs = append(cs,
			Case{Name: kind + ": one Gateway", Object: mk(gatewayTarget())},
			Case{Name: kind + ": HTTPRoute and GRPCRoute", Object: mk([]gatewayv1.LocalPolicyTargetReference{g("HTTPRoute", "a"), g("GRPCRoute", "a")})},
			Case{Name: kind + ": 16 targets", Object: mk(manyTargets(16))},
			Case{Name: kind + ": no targets", Object: mk([]gatewayv1.LocalPolicyTargetReference{}), Field: targets, Message: "should have at least 1 items"},
			Case{Name: kind + ": 17 targets", Object: mk(manyTargets(17)), Field: targets, Message: "must have at most 16 items"},
			Case{Name: kind + ": Service target", Object: mk([]gatewayv1.LocalPolicyTargetReference{g("Service", "svc")}), Field: targets, Message: validation.MsgTargetKinds},
			Case{Name: kind + ": TCPRoute target", Object: mk([]gatewayv1.LocalPolicyTargetReference{g("TCPRoute", "r")}), Field: targets, Message: validation.MsgTargetKinds},
			Case{Name: kind + ": wrong group", Object: mk([]gatewayv1.LocalPolicyTargetReference{badGroup}), Field: targets, Message: validation.MsgTargetGroup},
			Case{Name: kind + ": duplicate target", Object: mk([]gatewayv1.LocalPolicyTargetReference{g("HTTPRoute", "a"), g("HTTPRoute", "a")}), Field: targets, Message: validation.MsgTargetUnique},
			Case{Name: kind + ": same name, other kind", Object: mk([]gatewayv1.LocalPolicyTargetReference{g("HTTPRoute", "a"), g("GRPCRoute", "a")})},
		)
	}
	return cs
}

func sizeCases() []Case {
	var cs []Case
	for _, s := range []string{"4096", "4k", "4K", "1m", "1M", "0", "99999999999k"} {
		cs = append(cs, Case{Name: "size " + s + " accepted", Object: buffering(s, 0, "", "")})
	}
	pattern := fmt.Sprintf("should match '%s'", validation.SizePattern)
	for _, s := range []string{"8kb", "8 k", "-1k", "8k;", "1.5k", "k", "8g", "8k\n", "$size", "8k}"} {
		cs = append(cs, Case{Name: fmt.Sprintf("size %q rejected", s), Object: buffering(s, 0, "", ""), Field: buf + ".bufferSize", Message: pattern})
	}
	cs = append(cs,
		Case{Name: "size longer than 12 rejected", Object: buffering("1234567890123", 0, "", ""), Field: buf + ".bufferSize", Message: "may not be more than 12 bytes"},
		Case{Name: "empty size rejected", Object: psp(func(s *v1alpha1.ProxySettingsPolicySpec) {
			s.Buffering = &v1alpha1.ProxyBuffering{BufferSize: ptr(v1alpha1.Size(""))}
		}), Field: buf + ".bufferSize", Message: "should be at least 1 chars long"},
		Case{Name: "empty busyBuffersSize rejected", Object: psp(func(s *v1alpha1.ProxySettingsPolicySpec) {
			s.Buffering = &v1alpha1.ProxyBuffering{BusyBuffersSize: ptr(v1alpha1.Size(""))}
		}), Field: buf + ".busyBuffersSize", Message: "should be at least 1 chars long"},
		Case{Name: "buffers.size pattern", Object: buffering("", 8, "4 k", ""), Field: buf + ".buffers.size", Message: pattern},
		Case{Name: "busyBuffersSize pattern", Object: buffering("", 0, "", "16k;"), Field: buf + ".busyBuffersSize", Message: pattern},
	)
	return cs
}

func bufferingCases() []Case {
	return []Case{
		{Name: "buffers 2", Object: buffering("", 2, "4k", "")},
		{Name: "buffers 256", Object: buffering("", 256, "4k", "")},
		{Name: "buffers 1", Object: buffering("", 1, "4k", ""), Field: buf + ".buffers.number", Message: "should be greater than or equal to 2"},
		{Name: "buffers 257", Object: buffering("", 257, "4k", ""), Field: buf + ".buffers.number", Message: "should be less than or equal to 256"},
		{Name: "buffers size 0", Object: buffering("", 8, "0", ""), Field: buf + ".buffers", Message: validation.MsgBuffersSizeZero},
		{Name: "buffers size 0k", Object: buffering("", 8, "0k", ""), Field: buf + ".buffers", Message: validation.MsgBuffersSizeZero},
		{Name: "busy 16k >= buffer 8k (numeric, not string)", Object: buffering("8k", 0, "", "16k")},
		{Name: "busy 1m >= buffer 512k", Object: buffering("512k", 0, "", "1m")},
		{Name: "busy 8k == buffer 8k", Object: buffering("8k", 0, "", "8k")},
		{Name: "busy 8192 == buffer 8k", Object: buffering("8k", 0, "", "8192")},
		{Name: "busy 4k < buffer 8k", Object: buffering("8k", 0, "", "4k"), Field: buf, Message: validation.MsgBusyBelowBufferSize},
		{Name: "busy 1023 < buffer 1k", Object: buffering("1k", 0, "", "1023"), Field: buf, Message: validation.MsgBusyBelowBufferSize},
		{Name: "busy 1m < buffer 2048k", Object: buffering("2048k", 0, "", "1m"), Field: buf, Message: validation.MsgBusyBelowBufferSize},
		{Name: "busy 4k < buffers 8 8k", Object: buffering("", 8, "8k", "4k"), Field: buf, Message: validation.MsgBusyBelowBuffersSize},
		{Name: "busy 24k == 3 of 4 8k buffers", Object: buffering("", 4, "8k", "24k")},
		{Name: "busy 64k > 3 of 4 8k buffers", Object: buffering("", 4, "8k", "64k"), Field: buf, Message: validation.MsgBusyAboveBuffers},
		{Name: "every field", Object: buffering("8k", 16, "8k", "16k")},
		// buffers.size is at most 1024m, NGINX's proxy_max_temp_file_size; the
		// bound also keeps (number-1) × size inside int64 (it overflowed before).
		{Name: "buffers size 1024m", Object: buffering("", 8, "1024m", "")},
		{Name: "buffers size 1048576k", Object: buffering("", 8, "1048576k", "")},
		{Name: "buffers size 1073741824", Object: buffering("", 8, "1073741824", "")},
		{Name: "buffers size 1025m", Object: buffering("", 8, "1025m", ""), Field: buf + ".buffers", Message: validation.MsgBuffersSizeTooLarge},
		{Name: "buffers size 1073741825", Object: buffering("", 8, "1073741825", ""), Field: buf + ".buffers", Message: validation.MsgBuffersSizeTooLarge},
		{Name: "busy 261120m == 255 of 256 1024m buffers", Object: buffering("", 256, "1024m", "261120m")},
		{Name: "busy 261121m > 255 of 256 1024m buffers", Object: buffering("", 256, "1024m", "261121m"), Field: buf, Message: validation.MsgBusyAboveBuffers},
		{Name: "busy 99999999999m > 255 of 256 1024m buffers", Object: buffering("", 256, "1024m", "99999999999m"), Field: buf, Message: validation.MsgBusyAboveBuffers},
		{Name: "256 buffers of 99999999999m (product overflowed int64)", Object: buffering("", 256, "99999999999m", "99999999999m"), Field: buf + ".buffers", Message: validation.MsgBuffersSizeTooLarge},
		{Name: "3 buffers of 99999999999m, busy 1k", Object: buffering("", 3, "99999999999m", "1k"), Field: buf, Message: validation.MsgBusyBelowBuffersSize},
		{Name: "disable only", Object: psp(func(s *v1alpha1.ProxySettingsPolicySpec) {
			s.Buffering = &v1alpha1.ProxyBuffering{Disable: ptr(true)}
		})},
	}
}

func wafCases() []Case {
	const src = "spec.apPolicySource"
	return []Case{
		{Name: "WAF: Gateway and HTTPRoute mixed", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.TargetRefs = append(gatewayTarget(), target("HTTPRoute", "r"))
		}), Field: targets, Message: validation.MsgTargetMixed},
		{Name: "WAF: GRPCRoute and Gateway mixed", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.TargetRefs = append([]gatewayv1.LocalPolicyTargetReference{target("GRPCRoute", "r")}, gatewayTarget()...)
		}), Field: targets, Message: validation.MsgTargetMixed},
		{Name: "WAF: two Gateways", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.TargetRefs = append(gatewayTarget(), target("Gateway", "gw2"))
		})},
		{Name: "WAF: APPolicy in another namespace", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.APPolicySource.Namespace = ptr("security")
		})},
		{Name: "WAF: APPolicy name not DNS-1123", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.APPolicySource.Name = "Base_Policy"
		}), Field: src + ".name", Message: "should match '" + validation.DNS1123SubdomainPattern + "'"},
		{Name: "WAF: APPolicy name with ;", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.APPolicySource.Name = "base;policy"
		}), Field: src + ".name", Message: "should match '" + validation.DNS1123SubdomainPattern + "'"},
		{Name: "WAF: APPolicy name empty", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.APPolicySource.Name = ""
		}), Field: src + ".name", Message: "should be at least 1 chars long"},
		{Name: "WAF: APPolicy namespace with a dot", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.APPolicySource.Namespace = ptr("sec.urity")
		}), Field: src + ".namespace", Message: "should match '" + validation.DNS1123LabelPattern + "'"},
		{Name: "WAF: APLogConf in another namespace", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.SecurityLogs = []v1alpha1.SecurityLog{{Name: ptr("blocked"), APLogConfSource: v1alpha1.PLMObjectReference{Name: "log", Namespace: ptr("security")}}}
		})},
		{Name: "WAF: APLogConf name with a space", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.SecurityLogs = []v1alpha1.SecurityLog{{APLogConfSource: v1alpha1.PLMObjectReference{Name: "log all"}}}
		}), Field: "spec.securityLogs[0].apLogConfSource.name", Message: "should match '" + validation.DNS1123SubdomainPattern + "'"},
		{Name: "WAF: security log name not a label", Object: waf(func(s *v1alpha1.WAFGatewayBindingPolicySpec) {
			s.SecurityLogs = []v1alpha1.SecurityLog{{Name: ptr("Blocked"), APLogConfSource: v1alpha1.PLMObjectReference{Name: "log"}}}
		}), Field: "spec.securityLogs[0].name", Message: "should match '" + validation.DNS1123LabelPattern + "'"},
	}
}

func destinationCases() []Case {
	const dest = "spec.securityLogs[0].destination"
	filePattern := "should match '" + validation.SecurityLogFilePattern + "'"
	syslogPattern := "should match '" + validation.SyslogServerPattern + "'"
	cs := []Case{
		{Name: "destination type defaults to Stderr", Object: wafLog(v1alpha1.SecurityLogDestination{}), Stored: func(o client.Object) error {
			if got := o.(*v1alpha1.WAFGatewayBindingPolicy).Spec.SecurityLogs[0].Destination.Type; got != v1alpha1.SecurityLogDestinationStderr {
				return fmt.Errorf("destination type defaulted to %q, want Stderr", got)
			}
			return nil
		}},
		{Name: "destination Stderr", Object: wafLog(v1alpha1.SecurityLogDestination{Type: "Stderr"})},
		{Name: "destination type Kafka", Object: wafLog(v1alpha1.SecurityLogDestination{Type: "Kafka"}), Field: dest + ".type", Message: `Unsupported value: "Kafka"`},
		{Name: "File without file", Object: wafLog(v1alpha1.SecurityLogDestination{Type: "File"}), Field: dest, Message: validation.MsgFileIffFile},
		{Name: "Stderr with file", Object: wafLog(v1alpha1.SecurityLogDestination{Type: "Stderr", File: &v1alpha1.FileDestination{Path: "/var/log/app_protect/a.log"}}), Field: dest, Message: validation.MsgFileIffFile},
		{Name: "Syslog without syslog", Object: wafLog(v1alpha1.SecurityLogDestination{Type: "Syslog"}), Field: dest, Message: validation.MsgSyslogIffSyslog},
		{Name: "File with syslog", Object: wafLog(v1alpha1.SecurityLogDestination{Type: "File", File: &v1alpha1.FileDestination{Path: "/var/log/app_protect/a.log"}, Syslog: &v1alpha1.SyslogDestination{Server: "syslog:514"}}), Field: dest, Message: validation.MsgSyslogIffSyslog},
		{Name: "file in /var/log/app_protect", Object: fileLog("/var/log/app_protect/security.log")},
		{Name: "syslog DNS name", Object: syslogLog("syslog-svc.default:514")},
		{Name: "syslog IPv4", Object: syslogLog("10.0.0.1:514")},
		{Name: "syslog port 65535", Object: syslogLog("syslog:65535")},
		{Name: "syslog IPv4 255.255.255.255", Object: syslogLog("255.255.255.255:514")},
		{Name: "syslog name with numeric labels", Object: syslogLog("1a.10.example.com:514")},
		{Name: "syslog label of 63 characters", Object: syslogLog(strings.Repeat("a", 63) + ".example.com:514")},
		{Name: "syslog label of 64 characters", Object: syslogLog(strings.Repeat("a", 64) + ".example.com:514"), Field: dest + ".syslog.server", Message: syslogPattern},
		{Name: "syslog host 999.999.999.999", Object: syslogLog("999.999.999.999:514"), Field: dest + ".syslog.server", Message: validation.MsgSyslogHost},
		{Name: "syslog host 10.1", Object: syslogLog("10.1:514"), Field: dest + ".syslog.server", Message: validation.MsgSyslogHost},
		{Name: "syslog host 010.0.0.1", Object: syslogLog("010.0.0.1:514"), Field: dest + ".syslog.server", Message: validation.MsgSyslogHost},
		{Name: "syslog host with a numeric top-level label", Object: syslogLog("syslog.123:514"), Field: dest + ".syslog.server", Message: validation.MsgSyslogHost},
		{Name: "syslog port 0", Object: syslogLog("syslog:0"), Field: dest + ".syslog.server", Message: validation.MsgSyslogPort},
		{Name: "syslog port 70000", Object: syslogLog("syslog:70000"), Field: dest + ".syslog.server", Message: validation.MsgSyslogPort},
	}
	for _, p := range []string{
		"security.log", "/var/log/app_protect/../../etc/passwd", "/etc/nginx/nginx.conf",
		"/var/log/app_protect/a;b", "/var/log/app_protect/a{b", "/var/log/app_protect/a}b",
		"/var/log/app_protect/a b", `/var/log/app_protect/a"b`, "/var/log/app_protect/a'b",
		"/var/log/app_protect/a\nb", "/var/log/app_protect/.hidden", "/var/log/app_protect/$host",
		"/var/log/app_protect/", "/var/log/app_protect/sub/a.log",
	} {
		cs = append(cs, Case{Name: fmt.Sprintf("file path %q", p), Object: fileLog(p), Field: dest + ".file.path", Message: filePattern})
	}
	for _, s := range []string{
		"syslog", "sys log:514", "syslog:514;", "syslog:514}", `"syslog":514`, "syslog\n:514",
		"Syslog.example.com:514", "syslog:514 ", "$host:514", "[::1]:514", "syslog:-1",
		"sys{log:514", "sys'log:514", "syslog:514{", "sys/log:514", "sys\\log:514",
	} {
		cs = append(cs, Case{Name: fmt.Sprintf("syslog server %q", s), Object: syslogLog(s), Field: dest + ".syslog.server", Message: syslogPattern})
	}
	return cs
}

func nginxProxyCases() []Case {
	const svc = "spec.kubernetes.service"
	lb, clusterIP, nodePort := corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort
	local := corev1.ServiceExternalTrafficPolicyLocal
	return []Case{
		{Name: "NginxProxy: waf defaults to disabled", Object: np(nil), Stored: func(o client.Object) error {
			if got := o.(*v1alpha2.NginxProxy).Spec.WAF; got != v1alpha2.WAFDisabled {
				return fmt.Errorf("waf defaulted to %q, want disabled", got)
			}
			return nil
		}},
		{Name: "NginxProxy: waf enabled", Object: np(func(s *v1alpha2.NginxProxySpec) { s.WAF = v1alpha2.WAFEnabled })},
		{Name: "NginxProxy: waf on", Object: np(func(s *v1alpha2.NginxProxySpec) { s.WAF = "on" }), Field: "spec.waf", Message: `Unsupported value: "on"`},
		{Name: "NginxProxy: ipFamily ipv5", Object: np(func(s *v1alpha2.NginxProxySpec) { s.IPFamily = ptr(v1alpha2.IPFamily("ipv5")) }), Field: "spec.ipFamily", Message: `Unsupported value: "ipv5"`},
		{Name: "NginxProxy: workerConnections 0", Object: np(func(s *v1alpha2.NginxProxySpec) { s.WorkerConnections = ptr(int32(0)) }), Field: "spec.workerConnections", Message: "should be greater than or equal to 1"},
		{Name: "NginxProxy: workerConnections 65536", Object: np(func(s *v1alpha2.NginxProxySpec) { s.WorkerConnections = ptr(int32(65536)) }), Field: "spec.workerConnections", Message: "should be less than or equal to 65535"},
		{Name: "NginxProxy: upstreams.maxRetries 0", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Upstreams = &v1alpha2.Upstreams{MaxRetries: ptr(int32(0))} })},
		{Name: "NginxProxy: upstreams.maxRetries -1", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Upstreams = &v1alpha2.Upstreams{MaxRetries: ptr(int32(-1))} }), Field: "spec.upstreams.maxRetries", Message: "should be greater than or equal to 0"},
		{Name: "NginxProxy: upstreams.maxRetries 11", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Upstreams = &v1alpha2.Upstreams{MaxRetries: ptr(int32(11))} }), Field: "spec.upstreams.maxRetries", Message: "should be less than or equal to 10"},
		{Name: "NginxProxy: l4 at its bounds", Object: npL4(v1alpha2.L4Listeners{MaxConnections: ptr(int32(32767)), TCPIdleTimeout: ptr(gatewayv1.Duration("24h")), UDPSessionTimeout: ptr(gatewayv1.Duration("1s"))})},
		{Name: "NginxProxy: l4 at its other bounds", Object: npL4(v1alpha2.L4Listeners{MaxConnections: ptr(int32(1)), TCPIdleTimeout: ptr(gatewayv1.Duration("1s")), UDPSessionTimeout: ptr(gatewayv1.Duration("1h"))})},
		{Name: "NginxProxy: l4.maxConnections 0", Object: npL4(v1alpha2.L4Listeners{MaxConnections: ptr(int32(0))}), Field: "spec.l4.maxConnections", Message: "should be greater than or equal to 1"},
		{Name: "NginxProxy: l4.maxConnections 32768", Object: npL4(v1alpha2.L4Listeners{MaxConnections: ptr(int32(32768))}), Field: "spec.l4.maxConnections", Message: "should be less than or equal to 32767"},
		{Name: "NginxProxy: l4.tcpIdleTimeout 999ms", Object: npL4(v1alpha2.L4Listeners{TCPIdleTimeout: ptr(gatewayv1.Duration("999ms"))}), Field: "spec.l4.tcpIdleTimeout", Message: validation.MsgTCPIdleTimeout},
		{Name: "NginxProxy: l4.tcpIdleTimeout 24h1s", Object: npL4(v1alpha2.L4Listeners{TCPIdleTimeout: ptr(gatewayv1.Duration("24h1s"))}), Field: "spec.l4.tcpIdleTimeout", Message: validation.MsgTCPIdleTimeout},
		{Name: "NginxProxy: l4.udpSessionTimeout 0s", Object: npL4(v1alpha2.L4Listeners{UDPSessionTimeout: ptr(gatewayv1.Duration("0s"))}), Field: "spec.l4.udpSessionTimeout", Message: validation.MsgUDPSessionTimeout},
		{Name: "NginxProxy: l4.udpSessionTimeout 61m", Object: npL4(v1alpha2.L4Listeners{UDPSessionTimeout: ptr(gatewayv1.Duration("61m"))}), Field: "spec.l4.udpSessionTimeout", Message: validation.MsgUDPSessionTimeout},
		{Name: "NginxProxy: metrics on port 9200", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Metrics = &v1alpha2.Metrics{Port: ptr(int32(9200))} })},
		{Name: "NginxProxy: metrics disabled", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Metrics = &v1alpha2.Metrics{Disable: ptr(true)} })},
		{Name: "NginxProxy: metrics port 0", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Metrics = &v1alpha2.Metrics{Port: ptr(int32(0))} }), Field: "spec.metrics.port", Message: "should be greater than or equal to 1"},
		{Name: "NginxProxy: metrics port 65536", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Metrics = &v1alpha2.Metrics{Port: ptr(int32(65536))} }), Field: "spec.metrics.port", Message: "should be less than or equal to 65535"},
		{Name: "NginxProxy: metrics on the WAF enforcer's port", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.WAF = v1alpha2.WAFEnabled
			s.Metrics = &v1alpha2.Metrics{Port: ptr(int32(v1alpha2.WAFEnforcerPort))}
		}), Field: "spec", Message: validation.MsgMetricsPortWAF},
		{Name: "NginxProxy: metrics on 50000 without WAF", Object: np(func(s *v1alpha2.NginxProxySpec) { s.Metrics = &v1alpha2.Metrics{Port: ptr(int32(50000))} })},
		{Name: "NginxProxy: errorLevel verbose", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Logging = &v1alpha2.NginxLogging{ErrorLevel: ptr(v1alpha2.NginxErrorLevel("verbose"))}
		}), Field: "spec.logging.errorLevel", Message: `Unsupported value: "verbose"`},
		{Name: "NginxProxy: agentLevel notice", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Logging = &v1alpha2.NginxLogging{AgentLevel: ptr(v1alpha2.AgentLogLevel("notice"))}
		}), Field: "spec.logging.agentLevel", Message: `Unsupported value: "notice"`},
		{Name: "NginxProxy: replicas -1", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Replicas: ptr(int32(-1))}}
		}), Field: "spec.kubernetes.deployment.replicas", Message: "should be greater than or equal to 0"},
		{Name: "NginxProxy: image repository with a space", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Container: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Repository: ptr("my repo")}}}}
		}), Field: "spec.kubernetes.deployment.container.image.repository", Message: "should match '" + validation.ImageRepositoryPattern + "'"},
		{Name: "NginxProxy: enforcer tag starting with -", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{WAFContainers: &v1alpha2.WAFContainers{Enforcer: &v1alpha2.ContainerSpec{Image: &v1alpha2.Image{Tag: ptr("-latest")}}}}}
		}), Field: "spec.kubernetes.deployment.wafContainers.enforcer.image.tag", Message: "should match '" + validation.ImageTagPattern + "'"},
		{Name: "NginxProxy: image pull Secrets", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &v1alpha2.PodSpec{
				ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "f5-registry"}, {Name: "mirror.example.com"}}}}}
		})},
		{Name: "NginxProxy: image pull Secret with a capital", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &v1alpha2.PodSpec{
				ImagePullSecrets: []v1alpha2.LocalSecretReference{{Name: "F5-registry"}}}}}
		}), Field: "spec.kubernetes.deployment.pod.imagePullSecrets[0].name", Message: "should match '" + validation.DNS1123SubdomainPattern + "'"},
		{Name: "NginxProxy: image pull Secret without a name", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &v1alpha2.PodSpec{
				ImagePullSecrets: []v1alpha2.LocalSecretReference{{}}}}}
		}), Field: "spec.kubernetes.deployment.pod.imagePullSecrets[0].name", Message: "should be at least 1 chars long"},
		{Name: "NginxProxy: 17 image pull Secrets", Object: np(func(s *v1alpha2.NginxProxySpec) {
			var refs []v1alpha2.LocalSecretReference
			for i := range 17 {
				refs = append(refs, v1alpha2.LocalSecretReference{Name: fmt.Sprintf("registry-%d", i)})
			}
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{Pod: &v1alpha2.PodSpec{ImagePullSecrets: refs}}}
		}), Field: "spec.kubernetes.deployment.pod.imagePullSecrets", Message: "must have at most 16 items"},
		{Name: "NginxProxy: full deployment", Object: np(func(s *v1alpha2.NginxProxySpec) {
			s.WAF = v1alpha2.WAFEnabled
			img := &v1alpha2.Image{Repository: ptr("registry.example.com:5000/gatewall/nginx"), Tag: ptr("1.2.3"), PullPolicy: ptr(corev1.PullIfNotPresent)}
			s.Kubernetes = &v1alpha2.KubernetesSpec{Deployment: &v1alpha2.DeploymentSpec{
				Replicas:      ptr(int32(3)),
				Container:     &v1alpha2.ContainerSpec{Image: img},
				WAFContainers: &v1alpha2.WAFContainers{Enforcer: &v1alpha2.ContainerSpec{Image: img}, ConfigManager: &v1alpha2.ContainerSpec{Image: img}},
			}}
		})},
		{Name: "NginxProxy: LoadBalancer with IP and ranges", Object: npService("ipv4", v1alpha2.ServiceSpec{Type: &lb, LoadBalancerIP: ptr("203.0.113.7"), LoadBalancerSourceRanges: []string{"10.0.0.0/8"}, ExternalTrafficPolicy: &local})},
		{Name: "NginxProxy: IP without type (LoadBalancer)", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerIP: ptr("2001:db8::1")})},
		{Name: "NginxProxy: ClusterIP with loadBalancerIP", Object: npService("", v1alpha2.ServiceSpec{Type: &clusterIP, LoadBalancerIP: ptr("10.0.0.1")}), Field: svc, Message: validation.MsgLBIPType},
		{Name: "NginxProxy: NodePort with source ranges", Object: npService("", v1alpha2.ServiceSpec{Type: &nodePort, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}), Field: svc, Message: validation.MsgLBRangesType},
		{Name: "NginxProxy: ClusterIP with Local traffic policy", Object: npService("", v1alpha2.ServiceSpec{Type: &clusterIP, ExternalTrafficPolicy: &local}), Field: svc, Message: validation.MsgTrafficPolicyType},
		{Name: "NginxProxy: NodePort with Local traffic policy", Object: npService("", v1alpha2.ServiceSpec{Type: &nodePort, ExternalTrafficPolicy: &local})},
		{Name: "NginxProxy: loadBalancerIP not an IP", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerIP: ptr("gateway.example.com")}), Field: svc + ".loadBalancerIP", Message: validation.MsgLBIPNotIP},
		{Name: "NginxProxy: IPv6 loadBalancerIP with ipv4", Object: npService("ipv4", v1alpha2.ServiceSpec{LoadBalancerIP: ptr("2001:db8::1")}), Field: "spec", Message: validation.MsgLBIPNotIPv4},
		{Name: "NginxProxy: IPv4 loadBalancerIP with ipv6", Object: npService("ipv6", v1alpha2.ServiceSpec{LoadBalancerIP: ptr("10.0.0.1")}), Field: "spec", Message: validation.MsgLBIPNotIPv6},
		{Name: "NginxProxy: IPv6 loadBalancerIP with ipv6", Object: npService("ipv6", v1alpha2.ServiceSpec{Type: &lb, LoadBalancerIP: ptr("2001:db8::7")})},
		{Name: "NginxProxy: IPv4 loadBalancerIP with dual", Object: npService("dual", v1alpha2.ServiceSpec{Type: &lb, LoadBalancerIP: ptr("203.0.113.7")})},
		{Name: "NginxProxy: IPv6 loadBalancerIP with dual", Object: npService("dual", v1alpha2.ServiceSpec{LoadBalancerIP: ptr("2001:db8::7")})},
		{Name: "NginxProxy: IPv4-mapped IPv6 loadBalancerIP", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerIP: ptr("::ffff:10.0.0.1")}), Field: svc + ".loadBalancerIP", Message: validation.MsgLBIPNotIP},
		{Name: "NginxProxy: IPv6 source range", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: []string{"2001:db8::/32", "10.0.0.0/8"}})},
		{Name: "NginxProxy: IPv4-mapped IPv6 source range", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: []string{"::ffff:10.0.0.0/104"}}), Field: svc + ".loadBalancerSourceRanges", Message: validation.MsgLBRangesNotCIDR},
		{Name: "NginxProxy: source range not a CIDR", Object: npService("", v1alpha2.ServiceSpec{LoadBalancerSourceRanges: []string{"10.0.0.1"}}), Field: svc + ".loadBalancerSourceRanges", Message: validation.MsgLBRangesNotCIDR},
		{Name: "NginxProxy: service type ExternalName", Object: npService("", v1alpha2.ServiceSpec{Type: svcType(corev1.ServiceTypeExternalName)}), Field: svc + ".type", Message: `Unsupported value: "ExternalName"`},
	}
}
