package snapgen

import (
	"k8s.io/utils/ptr"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// nginxFields sets some of NGINX Gateway Fabric's NGINX-facing NginxProxy
// fields, valid most of the time, now and then values the CRD refuses.
func (g *gen) nginxFields(s *v1alpha2.NginxProxySpec) {
	if g.one(3) {
		mode := oneOf(g, v1alpha2.RewriteClientIPModeProxyProtocol, v1alpha2.RewriteClientIPModeXForwardedFor)
		r := &v1alpha2.RewriteClientIP{Mode: &mode, SetIPRecursively: ptr.To(g.one(2))}
		for range 1 + g.intn(3) {
			r.TrustedAddresses = append(r.TrustedAddresses, oneOf(g,
				v1alpha2.RewriteClientIPAddress{Type: "CIDR", Value: "10.0.0.0/8"},
				v1alpha2.RewriteClientIPAddress{Type: "CIDR", Value: "10.1.2.3/8"},
				v1alpha2.RewriteClientIPAddress{Type: "CIDR", Value: "::/0"},
				v1alpha2.RewriteClientIPAddress{Type: "IPAddress", Value: "2001:db8::1"},
				v1alpha2.RewriteClientIPAddress{Type: "Hostname", Value: "lb.example.com"},
			))
		}
		if g.bad() {
			r.TrustedAddresses = []v1alpha2.RewriteClientIPAddress{{Type: "CIDR", Value: "10.0.0.1"}}
		}
		s.RewriteClientIP = r
	}
	if g.one(3) {
		l := s.Logging
		if l == nil {
			l = &v1alpha2.NginxLogging{}
		}
		l.AccessLog = &v1alpha2.NginxAccessLog{Disable: ptr.To(g.one(8))}
		if g.one(2) {
			l.AccessLog.Format = ptr.To(oneOf(g,
				`$remote_addr "$request" $status $otel_trace_id`,
				`{"a":"$remote_addr","h":"$http_x_team","c":"$cookie_s","d":"$ 1"}`,
				`\"$$ ${ $1 ${request_id}x $http_authorization;{}#`,
				repeat(`$status"\`, 4000),
			))
		}
		if g.one(2) {
			l.AccessLog.Escape = ptr.To(oneOf[v1alpha2.NginxAccessLogEscape](g, "default", "json", "none"))
		}
		if g.one(4) && (l.ErrorLevel == nil || *l.ErrorLevel != "debug") {
			l.ErrorLogFormat = ptr.To(v1alpha2.NginxErrorLogFormatJSON)
		}
		if g.bad() {
			l.AccessLog.Format = ptr.To("a\nb")
		}
		s.Logging = l
	}
	if g.one(3) {
		c := &v1alpha2.Compression{Type: v1alpha2.GzipCompressionType, Gzip: &v1alpha2.GzipSettings{Vary: ptr.To(g.one(2))}}
		if g.one(2) {
			c.Level, c.MinLength = ptr.To(int32(1+g.intn(9))), ptr.To(int32(g.intn(2048)))
			c.Buffers = &v1alpha2.CompressionBuffers{Number: int32(1 + g.intn(256)), Size: oneOf[v1alpha1.ByteSize](g, "4k", "8k", "1")}
			c.MimeTypes = oneOf(g, []string{"text/css", "TEXT/CSS", "text/html"}, []string{"application/json"})
			c.Gzip.Proxied = oneOf(g, []v1alpha2.GzipProxiedType{"any"}, []v1alpha2.GzipProxiedType{"expired", "expired", "auth"})
			c.Gzip.Disable = oneOf(g, []string{"msie6"}, []string{`^curl/[0-9]+\.`})
			c.Gzip.HTTPVersion = ptr.To(oneOf[v1alpha2.GzipHTTPVersion](g, "1.0", "1.1"))
		}
		if g.bad() {
			c.Buffers = &v1alpha2.CompressionBuffers{Number: 256, Size: "1m"}
		}
		s.Compression = c
	}
	if g.one(4) {
		s.ServerTokens = ptr.To(oneOf(g, "on", "build", "", `my \"gw\"`))
		s.DisableHTTP2 = ptr.To(g.one(2))
		s.DisableSNIHostValidation = ptr.To(g.one(2))
		s.UseClusterIP = ptr.To(g.one(2))
		s.DisableBaseHeaders = oneOf(g, []v1alpha2.BaseHeaderName{"*"}, []v1alpha2.BaseHeaderName{"X-Real-IP", "X-Forwarded-Port"})
		s.WorkerProcesses, s.WorkerRlimitNofile = ptr.To(int32(1+g.intn(8))), ptr.To(int32(1024+g.intn(100000)))
		s.ZoneSize = ptr.To(v1alpha1.ByteSize("512k"))
	}
	if g.one(4) {
		s.Telemetry = &v1alpha2.Telemetry{Exporter: &v1alpha2.TelemetryExporter{Endpoint: ptr.To("collector:4317")}}
		if g.one(3) {
			s.Telemetry.DisabledFeatures = []v1alpha2.DisableTelemetryFeature{v1alpha2.DisableTracing}
		}
	}
}
