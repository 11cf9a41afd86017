package validation

import (
	"fmt"
	"net/netip"
	"regexp"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/syntax"
)

// The NGINX-facing fields of NGINX Gateway Fabric's NginxProxy
// (api/gateway/v1alpha2/nginxproxy_nginx_types.go), checked with their
// CRD's rules: patterns, lengths and messages are the CRD's.

// Patterns of those fields (the CRD markers repeat them).
const (
	// ServerTokensPattern is NGINX Gateway Fabric's serverTokens: '"' and
	// '\' escaped, no line break.
	ServerTokensPattern = `^([^"\\\x0A\x0D]|\\[^\x0A\x0D])*$`
	// AccessLogFormatPattern refuses single quotes (as NGINX Gateway
	// Fabric does) and every control character but tab.
	AccessLogFormatPattern = `^[^'\x00-\x08\x0A-\x1F\x7F]*$`
	// MimeTypePattern is type/subtype of HTTP token characters (without
	// the quote and backquote, which no MIME type has).
	MimeTypePattern = `^[A-Za-z0-9!#$%&+.^_|~-]+/[A-Za-z0-9!#$%&+.^_|~-]+$`
	// TelemetryEndpointPattern is a host name with an optional http://
	// and port.
	TelemetryEndpointPattern = `^(http://)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?$`
	// ServiceNamePattern is telemetry.serviceName.
	ServiceNamePattern = `^[a-zA-Z0-9_-]+$`
	// SpanAttributePattern is a span attribute's key or value: '"' escaped,
	// no '$', no lone '\' at the end.
	SpanAttributePattern = `^([^"$\\]|\\[^$])*$`
)

// Messages of the CEL rules of those fields.
const (
	MsgTrustedRequired     = "if mode is set, trustedAddresses is a required field"
	MsgTrustedCIDR         = "value must be a CIDR when type is CIDR"
	MsgTrustedIP           = "value must be an IP address when type is IPAddress"
	MsgTrustedHostname     = "value must be a lower-case DNS name (RFC 1123) when type is Hostname"
	MsgGzipRequired        = "type 'gzip' requires spec.compression.gzip to be set"
	MsgGzipBufferSize      = "size must be greater than 0"
	MsgGzipBuffersTotal    = "number × size must be at most 2m"
	MsgJSONErrorLogDebug   = "JSON-formatted error logs are not supported when errorLevel is debug"
	maxTrustedAddresses    = 64
	maxTrustedValueLen     = 253
	maxServerTokensLen     = 255
	maxAccessLogFormatLen  = 4096
	maxMimeTypes           = 32
	maxMimeTypeLen         = syntax.MaxGzipType
	maxGzipDisable         = 16
	maxGzipDisableLen      = 256
	maxGzipProxied         = 9
	maxGzipBuffers         = 256
	maxGzipBuffersBytes    = 2 << 20
	maxSpanAttributes      = 64
	maxSpanAttributeLen    = 255
	maxServiceNameLen      = 127
	maxTelemetryEndpoint   = 266
	maxWorkerProcesses     = 1024
	maxWorkerRlimitNofile  = 1048576
	maxDisableBaseHeaders  = 6
	maxDisabledFeatures    = 1
	maxCompressionMinLevel = 1
	maxCompressionLevel    = 9
)

var (
	serverTokensRE      = regexp.MustCompile(ServerTokensPattern)
	accessLogFormatRE   = regexp.MustCompile(AccessLogFormatPattern)
	mimeTypeRE          = regexp.MustCompile(MimeTypePattern)
	telemetryEndpointRE = regexp.MustCompile(TelemetryEndpointPattern)
	serviceNameRE       = regexp.MustCompile(ServiceNamePattern)
	spanAttributeRE     = regexp.MustCompile(SpanAttributePattern)
)

// nginxFields checks the NGINX-facing fields of an NginxProxy's spec.
func nginxFields(spec *field.Path, s *v1alpha2.NginxProxySpec) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, rewriteClientIP(spec.Child("rewriteClientIP"), s.RewriteClientIP)...)
	if s.WorkerProcesses != nil {
		errs = append(errs, intRange(spec.Child("workerProcesses"), int64(*s.WorkerProcesses), 1, maxWorkerProcesses)...)
	}
	if s.WorkerRlimitNofile != nil {
		errs = append(errs, intRange(spec.Child("workerRlimitNofile"), int64(*s.WorkerRlimitNofile), 1, maxWorkerRlimitNofile)...)
	}
	if s.ServerTokens != nil {
		errs = append(errs, stringField(spec.Child("serverTokens"), *s.ServerTokens, 0, maxServerTokensLen, serverTokensRE)...)
	}
	errs = append(errs, compression(spec.Child("compression"), s.Compression)...)
	errs = append(errs, byteSize(spec.Child("zoneSize"), s.ZoneSize)...)
	headers := spec.Child("disableBaseHeaders")
	if len(s.DisableBaseHeaders) > maxDisableBaseHeaders {
		errs = append(errs, field.TooMany(headers, len(s.DisableBaseHeaders), maxDisableBaseHeaders))
	}
	for i, h := range s.DisableBaseHeaders {
		errs = append(errs, enum(headers.Index(i), string(h), "*", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Port", "X-Real-IP")...)
	}
	errs = append(errs, unique(headers, s.DisableBaseHeaders)...)
	errs = append(errs, telemetry(spec.Child("telemetry"), s.Telemetry)...)
	return errs
}

// logging checks spec.logging.
func logging(path *field.Path, l *v1alpha2.NginxLogging) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	if l.ErrorLevel != nil {
		errs = append(errs, enum(path.Child("errorLevel"), string(*l.ErrorLevel),
			"debug", "info", "notice", "warn", "error", "crit", "alert", "emerg")...)
	}
	if l.ErrorLogFormat != nil {
		errs = append(errs, enum(path.Child("errorLogFormat"), string(*l.ErrorLogFormat), "default", "json")...)
		if *l.ErrorLogFormat == v1alpha2.NginxErrorLogFormatJSON && l.ErrorLevel != nil && *l.ErrorLevel == "debug" {
			errs = append(errs, field.Invalid(path, "object", MsgJSONErrorLogDebug))
		}
	}
	if l.AgentLevel != nil {
		errs = append(errs, enum(path.Child("agentLevel"), string(*l.AgentLevel),
			"debug", "info", "warn", "error", "panic", "fatal")...)
	}
	if a := l.AccessLog; a != nil {
		access := path.Child("accessLog")
		if a.Format != nil {
			format := access.Child("format")
			// The API server counts characters, not bytes.
			if n := utf8.RuneCountInString(*a.Format); n > maxAccessLogFormatLen {
				errs = append(errs, field.TooLong(format, *a.Format, maxAccessLogFormatLen))
			} else {
				errs = append(errs, matches(format, *a.Format, accessLogFormatRE)...)
			}
		}
		if a.Escape != nil {
			errs = append(errs, enum(access.Child("escape"), string(*a.Escape), "default", "json", "none")...)
		}
	}
	return errs
}

// rewriteClientIP checks spec.rewriteClientIP: trusted addresses as CEL
// reads them (isCIDR, isIP: no zone, no IPv4-mapped IPv6 address).
func rewriteClientIP(path *field.Path, r *v1alpha2.RewriteClientIP) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if r.Mode != nil {
		errs = append(errs, enum(path.Child("mode"), string(*r.Mode), "ProxyProtocol", "XForwardedFor")...)
		if len(r.TrustedAddresses) == 0 {
			errs = append(errs, field.Invalid(path, "object", MsgTrustedRequired))
		}
	}
	addrs := path.Child("trustedAddresses")
	if len(r.TrustedAddresses) > maxTrustedAddresses {
		errs = append(errs, field.TooMany(addrs, len(r.TrustedAddresses), maxTrustedAddresses))
	}
	for i, a := range r.TrustedAddresses {
		p := addrs.Index(i)
		errs = append(errs, enum(p.Child("type"), string(a.Type), "CIDR", "IPAddress", "Hostname")...)
		errs = append(errs, stringField(p.Child("value"), a.Value, 1, maxTrustedValueLen, nil)...)
		switch a.Type {
		case v1alpha2.RewriteClientIPCIDRAddressType:
			if _, ok := TrustedCIDR(a.Value); !ok {
				errs = append(errs, field.Invalid(p, "object", MsgTrustedCIDR))
			}
		case v1alpha2.RewriteClientIPIPAddressType:
			if addr, err := netip.ParseAddr(a.Value); err != nil || addr.Zone() != "" || addr.Is4In6() {
				errs = append(errs, field.Invalid(p, "object", MsgTrustedIP))
			}
		case v1alpha2.RewriteClientIPHostnameAddressType:
			if !resolverHostnameRE.MatchString(a.Value) {
				errs = append(errs, field.Invalid(p, "object", MsgTrustedHostname))
			}
		}
	}
	return errs
}

// TrustedCIDR reads a CIDR as CEL's isCIDR does (no IPv4-mapped IPv6
// prefix), with its host bits cleared: NGINX warns about set bits.
func TrustedCIDR(v string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(v)
	if err != nil || p.Addr().Is4In6() || p.Addr().Zone() != "" {
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// compression checks spec.compression: gzip's buffers within 2m for one
// response, MIME types as type/subtype, and gzip.disable's regular
// expressions as route matches' (RegexValue).
func compression(path *field.Path, c *v1alpha2.Compression) field.ErrorList {
	if c == nil {
		return nil
	}
	errs := enum(path.Child("type"), string(c.Type), "gzip")
	if c.Type == v1alpha2.GzipCompressionType && c.Gzip == nil {
		errs = append(errs, field.Invalid(path, "object", MsgGzipRequired))
	}
	if c.Level != nil {
		errs = append(errs, intRange(path.Child("level"), int64(*c.Level), maxCompressionMinLevel, maxCompressionLevel)...)
	}
	if c.MinLength != nil {
		errs = append(errs, intRange(path.Child("minLength"), int64(*c.MinLength), 0, 1<<31-1)...)
	}
	if b := c.Buffers; b != nil {
		bp := path.Child("buffers")
		errs = append(errs, intRange(bp.Child("number"), int64(b.Number), 1, maxGzipBuffers)...)
		size := v1alpha1.ByteSize(b.Size)
		if e := byteSize(bp.Child("size"), &size); len(e) > 0 {
			errs = append(errs, e...)
		} else if n, _ := ParseByteSize(string(b.Size)); n <= 0 {
			errs = append(errs, field.Invalid(bp, "object", MsgGzipBufferSize))
		} else if n*int64(b.Number) > maxGzipBuffersBytes {
			errs = append(errs, field.Invalid(bp, "object", MsgGzipBuffersTotal))
		}
	}
	types := path.Child("mimeTypes")
	errs = append(errs, listSize(types, len(c.MimeTypes), c.MimeTypes != nil, maxMimeTypes)...)
	var typeErrs field.ErrorList
	for i, t := range c.MimeTypes {
		typeErrs = append(typeErrs, stringField(types.Index(i), t, 0, maxMimeTypeLen, mimeTypeRE)...)
	}
	if len(typeErrs) == 0 && len(c.MimeTypes) > 0 {
		// Beyond the CRD: what NGINX's fixed table cannot hold.
		if err := syntax.CheckGzipTypes(c.MimeTypes); err != nil {
			typeErrs = append(typeErrs, field.Invalid(types, c.MimeTypes, err.Error()))
		}
	}
	errs = append(errs, typeErrs...)
	if g := c.Gzip; g != nil {
		gp := path.Child("gzip")
		if g.HTTPVersion != nil {
			errs = append(errs, enum(gp.Child("httpVersion"), string(*g.HTTPVersion), "1.0", "1.1")...)
		}
		disable := gp.Child("disable")
		errs = append(errs, listSize(disable, len(g.Disable), g.Disable != nil, maxGzipDisable)...)
		for i, d := range g.Disable {
			if len(d) > maxGzipDisableLen {
				errs = append(errs, field.TooLong(disable.Index(i), d, maxGzipDisableLen))
				continue
			}
			if err := RegexValue("User-Agent regular expression", d); err != nil {
				errs = append(errs, field.Invalid(disable.Index(i), d, err.Error()))
			}
		}
		proxied := gp.Child("proxied")
		errs = append(errs, listSize(proxied, len(g.Proxied), g.Proxied != nil, maxGzipProxied)...)
		for i, p := range g.Proxied {
			errs = append(errs, enum(proxied.Index(i), string(p), "off", "expired", "no-cache", "no-store", "private", "no_last_modified", "no_etag", "auth", "any")...)
		}
	}
	return errs
}

// listSize checks a list of the CRD's minItems 1 (when present) and
// maxItems, with the API server's messages.
func listSize(path *field.Path, n int, present bool, maximum int) field.ErrorList {
	switch {
	case present && n == 0:
		return field.ErrorList{field.Invalid(path, 0, "should have at least 1 items")}
	case n > maximum:
		return field.ErrorList{field.TooMany(path, n, maximum)}
	}
	return nil
}

// telemetry checks spec.telemetry.
func telemetry(path *field.Path, t *v1alpha2.Telemetry) field.ErrorList {
	if t == nil {
		return nil
	}
	var errs field.ErrorList
	features := path.Child("disabledFeatures")
	if len(t.DisabledFeatures) > maxDisabledFeatures {
		errs = append(errs, field.TooMany(features, len(t.DisabledFeatures), maxDisabledFeatures))
	}
	for i, f := range t.DisabledFeatures {
		errs = append(errs, enum(features.Index(i), string(f), string(v1alpha2.DisableTracing))...)
	}
	if e := t.Exporter; e != nil {
		ep := path.Child("exporter")
		errs = append(errs, duration(ep.Child("interval"), e.Interval)...)
		if e.BatchSize != nil {
			errs = append(errs, intRange(ep.Child("batchSize"), int64(*e.BatchSize), 0, 1<<31-1)...)
		}
		if e.BatchCount != nil {
			errs = append(errs, intRange(ep.Child("batchCount"), int64(*e.BatchCount), 0, 1<<31-1)...)
		}
		if e.Endpoint != nil {
			errs = append(errs, stringField(ep.Child("endpoint"), *e.Endpoint, 0, maxTelemetryEndpoint, telemetryEndpointRE)...)
		}
	}
	if t.ServiceName != nil {
		errs = append(errs, stringField(path.Child("serviceName"), *t.ServiceName, 0, maxServiceNameLen, serviceNameRE)...)
	}
	attrs := path.Child("spanAttributes")
	if len(t.SpanAttributes) > maxSpanAttributes {
		errs = append(errs, field.TooMany(attrs, len(t.SpanAttributes), maxSpanAttributes))
	}
	keys := map[string]bool{}
	for i, a := range t.SpanAttributes {
		p := attrs.Index(i)
		errs = append(errs, stringField(p.Child("key"), a.Key, 1, maxSpanAttributeLen, spanAttributeRE)...)
		errs = append(errs, stringField(p.Child("value"), a.Value, 1, maxSpanAttributeLen, spanAttributeRE)...)
		if keys[a.Key] {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("map[key:%s]", a.Key)))
		}
		keys[a.Key] = true
	}
	return errs
}
