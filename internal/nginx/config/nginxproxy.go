package config

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/syntax"
	"github.com/gatewall/gatewall/internal/validation"
)

// The effective NginxProxy's NGINX-facing settings (NGINX Gateway
// Fabric's fields), as http.conf and the servers write them. Values were
// validated by package validation; what the data plane does not carry out
// is left at Gatewall's default here and named in statuses
// (graph.NotProgrammed).

// ProxySettings are those settings, defaults filled in.
type ProxySettings struct {
	// RlimitNofile is workerRlimitNofile (0: from workerConnections).
	RlimitNofile int32
	// ServerTokens is server_tokens: off, on or build ("": off).
	ServerTokens string
	// NoHTTP2 turns HTTP/2 off on every server (disableHTTP2).
	NoHTTP2 bool
	// RelaxSNI answers 421 only where the SNI's listener and the Host's
	// have different TLS settings (disableSNIHostValidation).
	RelaxSNI bool
	// NoHeaders are the forwarding headers not set, lower-cased.
	NoHeaders map[string]bool
	// UseClusterIP is the default of every HTTP upstream whose Service's
	// policies do not say.
	UseClusterIP bool
	AccessLog    AccessLog
	// Gzip is compression; nil: none.
	Gzip *Gzip
	// Tracing propagates and logs W3C trace context (tracing.go).
	Tracing bool
	// RealIP is where the client's address comes from (realip.go).
	RealIP RealIP
}

// AccessLog is the access log's settings.
type AccessLog struct {
	Off bool
	// Format is the log_format's strings (syntax.LogFormat), to be
	// quoted; nil: NGINX's combined format.
	Format []string
	// Escape is the log_format's escape= ("": NGINX's default).
	Escape string
}

// Gzip is the gzip module's settings; unset fields keep NGINX's defaults.
type Gzip struct {
	Level, MinLength *int32
	// Buffers is gzip_buffers' number and size; nil: NGINX's.
	Buffers []string
	// Types are the MIME types besides text/html (syntax.GzipTypes).
	Types       []string
	HTTPVersion string
	Disable     []string
	Proxied     []string
	Vary        bool
}

// combinedFormat is NGINX's combined log format, which Gatewall writes
// itself when the log's escaping or tracing changes it.
const combinedFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`

// jsonFormat is the access log of an NginxProxy whose errorLogFormat is
// json and whose accessLog sets no format (NGINX Gateway Fabric's
// behaviour): combined's fields as JSON.
const jsonFormat = `{"time_local":"$time_local","remote_addr":"$remote_addr","remote_user":"$remote_user","request":"$request",` +
	`"status":"$status","body_bytes_sent":"$body_bytes_sent","http_referer":"$http_referer","http_user_agent":"$http_user_agent"}`

// proxySettings reads the effective NginxProxy's NGINX-facing settings.
func proxySettings(np *v1alpha2.NginxProxySpec) ProxySettings {
	p := ProxySettings{ServerTokens: "off"}
	if np == nil {
		return p
	}
	p.RlimitNofile = deref(np.WorkerRlimitNofile)
	if t := np.ServerTokens; t != nil && (*t == "on" || *t == "off" || *t == "build") {
		p.ServerTokens = *t
	}
	p.NoHTTP2 = isTrue(np.DisableHTTP2)
	p.RelaxSNI = isTrue(np.DisableSNIHostValidation)
	p.UseClusterIP = isTrue(np.UseClusterIP)
	for _, h := range np.DisableBaseHeaders {
		if p.NoHeaders == nil {
			p.NoHeaders = map[string]bool{}
		}
		p.NoHeaders[strings.ToLower(string(h))] = true
	}
	p.Tracing = np.TracingOn()
	p.AccessLog = accessLog(np.Logging, p.Tracing)
	p.Gzip = gzip(np.Compression)
	p.RealIP = realIP(np.RewriteClientIP)
	return p
}

// serverTokens is server_tokens' value: off unless the settings say.
func (p ProxySettings) serverTokens() string {
	if p.ServerTokens == "" {
		return "off"
	}
	return p.ServerTokens
}

func deref(v *int32) int32 {
	if v == nil {
		return 0
	}
	return *v
}

func isTrue(b *bool) bool { return b != nil && *b }

// accessLog is the access log of logging: off, the user's format, or
// Gatewall's own when escaping, a JSON error log or tracing asks for one.
func accessLog(l *v1alpha2.NginxLogging, tracing bool) AccessLog {
	var a AccessLog
	format, custom := combinedFormat, false
	if l != nil {
		if l.ErrorLogFormat != nil && *l.ErrorLogFormat == v1alpha2.NginxErrorLogFormatJSON {
			format, a.Escape = jsonFormat, "json"
		}
		if al := l.AccessLog; al != nil {
			if isTrue(al.Disable) {
				return AccessLog{Off: true}
			}
			if al.Format != nil && *al.Format != "" {
				format, custom, a.Escape = *al.Format, true, ""
			}
			if al.Escape != nil {
				a.Escape = string(*al.Escape)
			}
		}
	}
	if tracing && !custom {
		// The trace of each request beside it; a format of one's own
		// says where ($otel_trace_id, $otel_span_id).
		if format == jsonFormat {
			format = strings.TrimSuffix(format, "}") + `,"trace_id":"$otel_trace_id","span_id":"$otel_span_id"}`
		} else {
			format += " trace_id=$otel_trace_id span_id=$otel_span_id"
		}
	}
	if format != combinedFormat || a.Escape != "" {
		a.Format, _, _ = syntax.LogFormat(format)
	}
	return a
}

// gzip reads compression (validated: its buffers and types fit).
func gzip(c *v1alpha2.Compression) *Gzip {
	if c == nil || c.Type != v1alpha2.GzipCompressionType {
		return nil
	}
	g := &Gzip{Level: c.Level, MinLength: c.MinLength, Types: syntax.GzipTypes(c.MimeTypes)}
	if b := c.Buffers; b != nil {
		if n, err := validation.ParseByteSize(string(b.Size)); err == nil {
			// NGINX's size syntax has no g suffix: bytes, within 2m.
			g.Buffers = []string{strconv.Itoa(int(b.Number)), strconv.FormatInt(n, 10)}
		}
	}
	if z := c.Gzip; z != nil {
		g.Vary = isTrue(z.Vary)
		if z.HTTPVersion != nil {
			g.HTTPVersion = string(*z.HTTPVersion)
		}
		g.Disable = z.Disable
		for _, p := range z.Proxied {
			if !slices.Contains(g.Proxied, string(p)) { // a repeat makes NGINX warn
				g.Proxied = append(g.Proxied, string(p))
			}
		}
	}
	return g
}

// writeProxySettings writes the http-level directives of the settings
// (server_tokens is written first).
func (c *Config) writeProxySettings(w *writer) {
	p := c.Main.Proxy
	switch {
	case p.AccessLog.Off:
		w.line("access_log", "off")
	case p.AccessLog.Format != nil:
		words := []string{"log_format", accessLogFormat}
		if p.AccessLog.Escape != "" {
			words = append(words, "escape="+p.AccessLog.Escape)
		}
		for _, part := range p.AccessLog.Format {
			words = append(words, Quote(part))
		}
		w.line(words...)
		w.line("access_log", "/dev/stdout", accessLogFormat)
	default:
		w.line("access_log", "/dev/stdout")
	}
	if g := p.Gzip; g != nil {
		writeGzip(w, g)
	}
	c.writeRealIP(w)
}

// accessLogFormat names the log_format of Gatewall's access log.
const accessLogFormat = "gatewall"

func writeGzip(w *writer, g *Gzip) {
	w.line("gzip", "on")
	if g.Level != nil {
		w.line("gzip_comp_level", strconv.Itoa(int(*g.Level)))
	}
	if g.MinLength != nil {
		w.line("gzip_min_length", strconv.Itoa(int(*g.MinLength)))
	}
	if g.Buffers != nil {
		w.line(append([]string{"gzip_buffers"}, g.Buffers...)...)
	}
	if g.HTTPVersion != "" {
		w.line("gzip_http_version", g.HTTPVersion)
	}
	if len(g.Types) > 0 {
		words := []string{"gzip_types"}
		for _, t := range g.Types {
			words = append(words, Quote(t))
		}
		w.line(words...)
	}
	if len(g.Proxied) > 0 {
		w.line(append([]string{"gzip_proxied"}, g.Proxied...)...)
	}
	if len(g.Disable) > 0 {
		words := []string{"gzip_disable"}
		for _, d := range g.Disable {
			words = append(words, Quote(d))
		}
		w.line(words...)
	}
	if g.Vary {
		w.line("gzip_vary", "on")
	}
}

// baseHeaders are the forwarding headers Gatewall sets on proxied
// requests unless disableBaseHeaders names them (never the loop header).
func (p ProxySettings) baseHeader(name string) bool {
	return !p.NoHeaders["*"] && !p.NoHeaders[strings.ToLower(name)]
}
