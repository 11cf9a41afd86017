package apicases

import (
	"fmt"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/validation"
)

// npWith is an NginxProxy whose spec mutate sets.
func npWith(mutate func(*v1alpha2.NginxProxySpec)) *v1alpha2.NginxProxy { return np(mutate) }

// nginxFieldCases are NGINX Gateway Fabric's NGINX-facing NginxProxy
// fields, with their CRD's rules and the rules Gatewall adds (trusted
// addresses that are addresses, gzip buffers within 2m for one response,
// access log formats without control characters, MIME types of
// type/subtype).
func nginxFieldCases() []Case {
	var cs []Case
	cs = append(cs, rewriteClientIPCases()...)
	cs = append(cs, loggingCases()...)
	cs = append(cs, compressionCases()...)
	cs = append(cs, telemetryCases()...)
	cs = append(cs, scalarNginxCases()...)
	return cs
}

func trusted(t v1alpha2.RewriteClientIPAddressType, v string) v1alpha2.RewriteClientIPAddress {
	return v1alpha2.RewriteClientIPAddress{Type: t, Value: v}
}

func npRewrite(r v1alpha2.RewriteClientIP) *v1alpha2.NginxProxy {
	return npWith(func(s *v1alpha2.NginxProxySpec) { s.RewriteClientIP = &r })
}

func rewriteClientIPCases() []Case {
	const path = "spec.rewriteClientIP"
	cidr, ip, host := v1alpha2.RewriteClientIPCIDRAddressType, v1alpha2.RewriteClientIPIPAddressType, v1alpha2.RewriteClientIPHostnameAddressType
	pp, xff := v1alpha2.RewriteClientIPModeProxyProtocol, v1alpha2.RewriteClientIPModeXForwardedFor
	one := func(a v1alpha2.RewriteClientIPAddress) []v1alpha2.RewriteClientIPAddress {
		return []v1alpha2.RewriteClientIPAddress{a}
	}
	cs := []Case{
		{Name: "rewriteClientIP: NGF's ProxyProtocol example", Object: npRewrite(v1alpha2.RewriteClientIP{Mode: &pp, TrustedAddresses: one(trusted(cidr, "0.0.0.0/0"))})},
		{Name: "rewriteClientIP: XForwardedFor, recursive, every type", Object: npRewrite(v1alpha2.RewriteClientIP{Mode: &xff, SetIPRecursively: ptr(true),
			TrustedAddresses: []v1alpha2.RewriteClientIPAddress{trusted(cidr, "10.0.0.0/8"), trusted(cidr, "2001:db8::/32"), trusted(ip, "192.0.2.1"), trusted(ip, "2001:db8::1"), trusted(host, "lb.example.com")}})},
		{Name: "rewriteClientIP: addresses without mode", Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: one(trusted(cidr, "10.0.0.0/8"))})},
		{Name: "rewriteClientIP: CIDR with host bits", Object: npRewrite(v1alpha2.RewriteClientIP{Mode: &xff, TrustedAddresses: one(trusted(cidr, "10.1.2.3/8"))})},
		{Name: "rewriteClientIP: mode without addresses", Object: npRewrite(v1alpha2.RewriteClientIP{Mode: &pp}), Field: path, Message: validation.MsgTrustedRequired},
		{Name: "rewriteClientIP: mode with an empty list", Object: npRewrite(v1alpha2.RewriteClientIP{Mode: &xff, TrustedAddresses: []v1alpha2.RewriteClientIPAddress{}}), Field: path, Message: validation.MsgTrustedRequired},
		{Name: "rewriteClientIP: mode Forwarded", Object: npRewrite(v1alpha2.RewriteClientIP{Mode: ptr(v1alpha2.RewriteClientIPMode("Forwarded")), TrustedAddresses: one(trusted(ip, "10.0.0.1"))}),
			Field: path + ".mode", Message: `Unsupported value: "Forwarded"`},
		{Name: "rewriteClientIP: type Range", Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: one(trusted("Range", "10.0.0.1-10.0.0.9"))}),
			Field: path + ".trustedAddresses[0].type", Message: `Unsupported value: "Range"`},
		{Name: "rewriteClientIP: empty value", Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: one(trusted(ip, ""))}),
			Field: path + ".trustedAddresses[0].value", Message: "should be at least 1 chars long"},
		{Name: "rewriteClientIP: 65 addresses", Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: func() []v1alpha2.RewriteClientIPAddress {
			var out []v1alpha2.RewriteClientIPAddress
			for i := range 65 {
				out = append(out, trusted(ip, fmt.Sprintf("10.0.0.%d", i+1)))
			}
			return out
		}()}), Field: path + ".trustedAddresses", Message: "must have at most 64 items"},
	}
	for _, v := range []string{"10.0.0.1", "10.0.0.0/33", "::ffff:10.0.0.0/104", "10.0.0.0/8 ; x", "lb.example.com"} {
		cs = append(cs, Case{Name: fmt.Sprintf("rewriteClientIP: CIDR %q", v), Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: one(trusted(cidr, v))}),
			Field: path + ".trustedAddresses[0]", Message: validation.MsgTrustedCIDR})
	}
	for _, v := range []string{"10.0.0.0/8", "10.0.0.300", "::ffff:10.0.0.1", "fe80::1%eth0", "unix:"} {
		cs = append(cs, Case{Name: fmt.Sprintf("rewriteClientIP: IPAddress %q", v), Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: one(trusted(ip, v))}),
			Field: path + ".trustedAddresses[0]", Message: validation.MsgTrustedIP})
	}
	for _, v := range []string{"LB.example.com", "lb.example.com.", "lb_1.example.com", "lb.example.com:80", "10.0.0.0/8"} {
		cs = append(cs, Case{Name: fmt.Sprintf("rewriteClientIP: Hostname %q", v), Object: npRewrite(v1alpha2.RewriteClientIP{TrustedAddresses: one(trusted(host, v))}),
			Field: path + ".trustedAddresses[0]", Message: validation.MsgTrustedHostname})
	}
	return cs
}

func npLogging(l v1alpha2.NginxLogging) *v1alpha2.NginxProxy {
	return npWith(func(s *v1alpha2.NginxProxySpec) { s.Logging = &l })
}

func loggingCases() []Case {
	const path = "spec.logging"
	json, def := v1alpha2.NginxErrorLogFormatJSON, v1alpha2.NginxErrorLogFormatDefault
	format := func(f string) *v1alpha2.NginxLogging {
		return &v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{Format: &f}}
	}
	formatPattern := "should match '" + validation.AccessLogFormatPattern + "'"
	cs := []Case{
		{Name: "logging: NGF's access log", Object: npLogging(v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{
			Format: ptr(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`),
			Escape: ptr(v1alpha2.NginxAccessLogEscapeJSON)}})},
		{Name: "logging: access log off", Object: npLogging(v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{Disable: ptr(true)}})},
		{Name: "logging: JSON format with a tab, quotes and braces", Object: npLogging(*format("{\"addr\":\"$remote_addr\",\t\"cost\": \"$ 5\", \"x\": \"${request_id}\\n\"}"))},
		{Name: "logging: format of 4096 characters", Object: npLogging(*format(strings.Repeat("é", 4096)))},
		{Name: "logging: json error log", Object: npLogging(v1alpha2.NginxLogging{ErrorLogFormat: &json, ErrorLevel: ptr(v1alpha2.NginxErrorLevel("warn"))})},
		{Name: "logging: default error log at debug", Object: npLogging(v1alpha2.NginxLogging{ErrorLogFormat: &def, ErrorLevel: ptr(v1alpha2.NginxErrorLevel("debug"))})},
		{Name: "logging: agentLevel panic (NGF's)", Object: npLogging(v1alpha2.NginxLogging{AgentLevel: ptr(v1alpha2.AgentLogLevel("panic"))})},
		{Name: "logging: agentLevel fatal (NGF's)", Object: npLogging(v1alpha2.NginxLogging{AgentLevel: ptr(v1alpha2.AgentLogLevel("fatal"))})},
		{Name: "logging: agentLevel trace", Object: npLogging(v1alpha2.NginxLogging{AgentLevel: ptr(v1alpha2.AgentLogLevel("trace"))}),
			Field: path + ".agentLevel", Message: `Unsupported value: "trace"`},
		{Name: "logging: json error log at debug", Object: npLogging(v1alpha2.NginxLogging{ErrorLogFormat: &json, ErrorLevel: ptr(v1alpha2.NginxErrorLevel("debug"))}),
			Field: path, Message: validation.MsgJSONErrorLogDebug},
		{Name: "logging: errorLogFormat text", Object: npLogging(v1alpha2.NginxLogging{ErrorLogFormat: ptr(v1alpha2.NginxErrorLogFormat("text"))}),
			Field: path + ".errorLogFormat", Message: `Unsupported value: "text"`},
		{Name: "logging: escape html", Object: npLogging(v1alpha2.NginxLogging{AccessLog: &v1alpha2.NginxAccessLog{Escape: ptr(v1alpha2.NginxAccessLogEscape("html"))}}),
			Field: path + ".accessLog.escape", Message: `Unsupported value: "html"`},
		{Name: "logging: format of 4097 characters", Object: npLogging(*format(strings.Repeat("a", 4097))),
			Field: path + ".accessLog.format", Message: "may not be more than 4096"},
	}
	for _, f := range []string{"'$remote_addr'", "a\nb", "a\rb", "a\x00b", "a\x1bb", "a\x7fb"} {
		cs = append(cs, Case{Name: fmt.Sprintf("logging: format %q", f), Object: npLogging(*format(f)), Field: path + ".accessLog.format", Message: formatPattern})
	}
	return cs
}

func npCompression(c v1alpha2.Compression) *v1alpha2.NginxProxy {
	return npWith(func(s *v1alpha2.NginxProxySpec) { s.Compression = &c })
}

func compressionCases() []Case {
	const path = "spec.compression"
	gz := v1alpha2.GzipCompressionType
	bufs := func(n int32, size string) *v1alpha2.CompressionBuffers {
		return &v1alpha2.CompressionBuffers{Number: n, Size: v1alpha1.ByteSize(size)}
	}
	cs := []Case{
		{Name: "compression: every field", Object: npCompression(v1alpha2.Compression{Type: gz, Level: ptr(int32(6)), MinLength: ptr(int32(256)),
			Buffers: bufs(16, "8k"), MimeTypes: []string{"application/json", "text/css", "application/vnd.api+json", "image/svg+xml"},
			Gzip: &v1alpha2.GzipSettings{Vary: ptr(true), HTTPVersion: ptr(v1alpha2.GzipHTTPVersion("1.0")), Disable: []string{"msie6", `^Mozilla/4\.0 \(compatible; MSIE [1-6]\.`},
				Proxied: []v1alpha2.GzipProxiedType{"expired", "no-cache", "no-store", "private", "auth"}}})},
		{Name: "compression: gzip with no settings", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}})},
		{Name: "compression: buffers of 2m", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Buffers: bufs(256, "8k")})},
		{Name: "compression: no gzip", Object: npCompression(v1alpha2.Compression{Type: gz}), Field: path, Message: validation.MsgGzipRequired},
		{Name: "compression: type brotli", Object: npCompression(v1alpha2.Compression{Type: "brotli", Gzip: &v1alpha2.GzipSettings{}}),
			Field: path + ".type", Message: `Unsupported value: "brotli"`},
		{Name: "compression: level 0", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Level: ptr(int32(0))}),
			Field: path + ".level", Message: "should be greater than or equal to 1"},
		{Name: "compression: level 10", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Level: ptr(int32(10))}),
			Field: path + ".level", Message: "should be less than or equal to 9"},
		{Name: "compression: minLength -1", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, MinLength: ptr(int32(-1))}),
			Field: path + ".minLength", Message: "should be greater than or equal to 0"},
		{Name: "compression: buffers of size 0", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Buffers: bufs(16, "0k")}),
			Field: path + ".buffers", Message: validation.MsgGzipBufferSize},
		{Name: "compression: buffers of 2m and a byte", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Buffers: bufs(1, "2049k")}),
			Field: path + ".buffers", Message: validation.MsgGzipBuffersTotal},
		{Name: "compression: buffers of 9999g", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Buffers: bufs(256, "9999g")}),
			Field: path + ".buffers", Message: validation.MsgGzipBuffersTotal},
		{Name: "compression: 257 buffers", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Buffers: bufs(257, "1k")}),
			Field: path + ".buffers.number", Message: "should be less than or equal to 256"},
		{Name: "compression: buffer size 8kb", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, Buffers: bufs(4, "8kb")}),
			Field: path + ".buffers.size", Message: "should match '" + validation.ByteSizePattern + "'"},
		{Name: "compression: 33 MIME types", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, MimeTypes: func() []string {
			var out []string
			for i := range 33 {
				out = append(out, fmt.Sprintf("application/x-%d", i))
			}
			return out
		}()}), Field: path + ".mimeTypes", Message: "must have at most 32 items"},
		{Name: "compression: 10 proxied values", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{Proxied: []v1alpha2.GzipProxiedType{
			"off", "expired", "no-cache", "no-store", "private", "no_last_modified", "no_etag", "auth", "any", "any"}}}),
			Field: path + ".gzip.proxied", Message: "must have at most 9 items"},
		{Name: "compression: proxied sometimes", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{Proxied: []v1alpha2.GzipProxiedType{"sometimes"}}}),
			Field: path + ".gzip.proxied[0]", Message: `Unsupported value: "sometimes"`},
		{Name: "compression: httpVersion 2", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{HTTPVersion: ptr(v1alpha2.GzipHTTPVersion("2"))}}),
			Field: path + ".gzip.httpVersion", Message: `Unsupported value: "2"`},
		{Name: "compression: MIME type of 46 characters", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, MimeTypes: []string{"application/" + strings.Repeat("x", 34)}})},
		{Name: "compression: MIME type of 47 characters", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, MimeTypes: []string{"application/" + strings.Repeat("x", 35)}}),
			Field: path + ".mimeTypes[0]", Message: "may not be more than 46"},
		{Name: "compression: disable of 257 characters", Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{Disable: []string{strings.Repeat("a", 257)}}}),
			Field: path + ".gzip.disable[0]", Message: "may not be more than 256"},
	}
	for _, t := range []string{"text/*", "*", "json", "text/html; charset=utf-8", "text/css\"", "a/b/c", "text/{css}"} {
		cs = append(cs, Case{Name: fmt.Sprintf("compression: MIME type %q", t), Object: npCompression(v1alpha2.Compression{Type: gz, Gzip: &v1alpha2.GzipSettings{}, MimeTypes: []string{t}}),
			Field: path + ".mimeTypes[0]", Message: "should match '" + validation.MimeTypePattern + "'"})
	}
	return cs
}

func npTelemetry(t v1alpha2.Telemetry) *v1alpha2.NginxProxy {
	return npWith(func(s *v1alpha2.NginxProxySpec) { s.Telemetry = &t })
}

func telemetryCases() []Case {
	const path = "spec.telemetry"
	attr := func(k, v string) v1alpha1.SpanAttribute { return v1alpha1.SpanAttribute{Key: k, Value: v} }
	cs := []Case{
		{Name: "telemetry: NGF's example", Object: npTelemetry(v1alpha2.Telemetry{
			Exporter:    &v1alpha2.TelemetryExporter{Endpoint: ptr("otel-collector.monitoring.svc:4317"), Interval: ptr(v1alpha1.Duration("5s")), BatchSize: ptr(int32(512)), BatchCount: ptr(int32(4))},
			ServiceName: ptr("my-gateway"), SpanAttributes: []v1alpha1.SpanAttribute{attr("team", "payments"), attr(`say \"hi\"`, `a\\b`)}})},
		{Name: "telemetry: tracing off", Object: npTelemetry(v1alpha2.Telemetry{DisabledFeatures: []v1alpha2.DisableTelemetryFeature{v1alpha2.DisableTracing}})},
		{Name: "telemetry: endpoint with http://", Object: npTelemetry(v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr("http://collector:4317")}})},
		{Name: "telemetry: feature DisableMetrics", Object: npTelemetry(v1alpha2.Telemetry{DisabledFeatures: []v1alpha2.DisableTelemetryFeature{"DisableMetrics"}}),
			Field: path + ".disabledFeatures[0]", Message: `Unsupported value: "DisableMetrics"`},
		{Name: "telemetry: batchSize -1", Object: npTelemetry(v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{BatchSize: ptr(int32(-1))}}),
			Field: path + ".exporter.batchSize", Message: "should be greater than or equal to 0"},
		{Name: "telemetry: batchCount -1", Object: npTelemetry(v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{BatchCount: ptr(int32(-1))}}),
			Field: path + ".exporter.batchCount", Message: "should be greater than or equal to 0"},
		{Name: "telemetry: interval 1.5s", Object: npTelemetry(v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{Interval: ptr(v1alpha1.Duration("1.5s"))}}),
			Field: path + ".exporter.interval", Message: "should match '" + validation.DurationPattern + "'"},
		{Name: "telemetry: serviceName with a space", Object: npTelemetry(v1alpha2.Telemetry{ServiceName: ptr("my gateway")}),
			Field: path + ".serviceName", Message: "should match '" + validation.ServiceNamePattern + "'"},
		{Name: "telemetry: serviceName of 128", Object: npTelemetry(v1alpha2.Telemetry{ServiceName: ptr(strings.Repeat("a", 128))}),
			Field: path + ".serviceName", Message: "may not be more than 127"},
		{Name: "telemetry: span attribute with $", Object: npTelemetry(v1alpha2.Telemetry{SpanAttributes: []v1alpha1.SpanAttribute{attr("k", "$remote_addr")}}),
			Field: path + ".spanAttributes[0].value", Message: "should match '" + validation.SpanAttributePattern + "'"},
		{Name: "telemetry: span attribute with a bare quote", Object: npTelemetry(v1alpha2.Telemetry{SpanAttributes: []v1alpha1.SpanAttribute{attr(`a"b`, "v")}}),
			Field: path + ".spanAttributes[0].key", Message: "should match '" + validation.SpanAttributePattern + "'"},
		{Name: "telemetry: span attribute ending in \\", Object: npTelemetry(v1alpha2.Telemetry{SpanAttributes: []v1alpha1.SpanAttribute{attr("k", `v\`)}}),
			Field: path + ".spanAttributes[0].value", Message: "should match '" + validation.SpanAttributePattern + "'"},
		{Name: "telemetry: empty span attribute key", Object: npTelemetry(v1alpha2.Telemetry{SpanAttributes: []v1alpha1.SpanAttribute{attr("", "v")}}),
			Field: path + ".spanAttributes[0].key", Message: "should be at least 1 chars long"},
		{Name: "telemetry: a span attribute key twice", Object: npTelemetry(v1alpha2.Telemetry{SpanAttributes: []v1alpha1.SpanAttribute{attr("k", "a"), attr("k", "b")}}),
			Field: path + ".spanAttributes[1]", Message: "Duplicate value"},
	}
	for _, e := range []string{"https://collector:4317", "collector:4317/v1", "Collector:4317", "collector:123456", "grpc://collector"} {
		cs = append(cs, Case{Name: fmt.Sprintf("telemetry: endpoint %q", e), Object: npTelemetry(v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr(e)}}),
			Field: path + ".exporter.endpoint", Message: "should match '" + validation.TelemetryEndpointPattern + "'"})
	}
	return cs
}

func scalarNginxCases() []Case {
	i32 := func(v int32) *int32 { return &v }
	set := func(name string, mutate func(*v1alpha2.NginxProxySpec)) Case {
		return Case{Name: "NginxProxy: " + name, Object: npWith(mutate)}
	}
	bad := func(c Case, field, msg string) Case { c.Field, c.Message = field, msg; return c }
	tokensPattern := "should match '" + validation.ServerTokensPattern + "'"
	cs := []Case{
		set("every boolean", func(s *v1alpha2.NginxProxySpec) {
			s.DisableHTTP2, s.UseClusterIP, s.DisableSNIHostValidation = ptr(true), ptr(true), ptr(true)
		}),
		set("workers at their bounds", func(s *v1alpha2.NginxProxySpec) { s.WorkerProcesses, s.WorkerRlimitNofile = i32(1024), i32(1048576) }),
		set("workers at their other bounds", func(s *v1alpha2.NginxProxySpec) { s.WorkerProcesses, s.WorkerRlimitNofile = i32(1), i32(1) }),
		bad(set("workerProcesses 0", func(s *v1alpha2.NginxProxySpec) { s.WorkerProcesses = i32(0) }), "spec.workerProcesses", "should be greater than or equal to 1"),
		bad(set("workerProcesses 1025", func(s *v1alpha2.NginxProxySpec) { s.WorkerProcesses = i32(1025) }), "spec.workerProcesses", "should be less than or equal to 1024"),
		bad(set("workerRlimitNofile 0", func(s *v1alpha2.NginxProxySpec) { s.WorkerRlimitNofile = i32(0) }), "spec.workerRlimitNofile", "should be greater than or equal to 1"),
		bad(set("workerRlimitNofile 1048577", func(s *v1alpha2.NginxProxySpec) { s.WorkerRlimitNofile = i32(1048577) }), "spec.workerRlimitNofile", "should be less than or equal to 1048576"),
		set("zoneSize 512k", func(s *v1alpha2.NginxProxySpec) { s.ZoneSize = ptr(v1alpha1.ByteSize("512k")) }),
		bad(set("zoneSize 512kb", func(s *v1alpha2.NginxProxySpec) { s.ZoneSize = ptr(v1alpha1.ByteSize("512kb")) }), "spec.zoneSize", "should match '"+validation.ByteSizePattern+"'"),
		set("disableBaseHeaders: every header", func(s *v1alpha2.NginxProxySpec) {
			s.DisableBaseHeaders = []v1alpha2.BaseHeaderName{"*", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Port", "X-Real-IP"}
		}),
		bad(set("disableBaseHeaders: the loop header", func(s *v1alpha2.NginxProxySpec) { s.DisableBaseHeaders = []v1alpha2.BaseHeaderName{"X-Gatewall-Loop"} }),
			"spec.disableBaseHeaders[0]", `Unsupported value: "X-Gatewall-Loop"`),
		bad(set("disableBaseHeaders: Host", func(s *v1alpha2.NginxProxySpec) { s.DisableBaseHeaders = []v1alpha2.BaseHeaderName{"Host"} }),
			"spec.disableBaseHeaders[0]", `Unsupported value: "Host"`),
		bad(set("disableBaseHeaders: twice", func(s *v1alpha2.NginxProxySpec) {
			s.DisableBaseHeaders = []v1alpha2.BaseHeaderName{"X-Real-IP", "X-Real-IP"}
		}),
			"spec.disableBaseHeaders[1]", `Duplicate value: "X-Real-IP"`),
	}
	for _, v := range []string{"off", "on", "build", "", "my-server", `say \"hi\"`, `a\\b`} {
		cs = append(cs, set(fmt.Sprintf("serverTokens %q", v), func(s *v1alpha2.NginxProxySpec) { s.ServerTokens = ptr(v) }))
	}
	for _, v := range []string{`say "hi"`, `ends in \`, "a\nb", "a\rb"} {
		cs = append(cs, bad(set(fmt.Sprintf("serverTokens %q", v), func(s *v1alpha2.NginxProxySpec) { s.ServerTokens = ptr(v) }), "spec.serverTokens", tokensPattern))
	}
	cs = append(cs, bad(set("serverTokens of 256", func(s *v1alpha2.NginxProxySpec) { s.ServerTokens = ptr(strings.Repeat("a", 256)) }), "spec.serverTokens", "may not be more than 255"))
	return cs
}
