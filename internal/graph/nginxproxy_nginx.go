package graph

import "github.com/gatewall/gatewall/api/gateway/v1alpha2"

// The class ⊕ Gateway overlay of NGINX Gateway Fabric's NGINX-facing
// NginxProxy fields (api/gateway/v1alpha2/nginxproxy_nginx_types.go), as
// EffectiveNginxProxy overlays the others: a field the Gateway's
// NginxProxy sets wins, structs field by field, and a list is one setting
// (the Gateway's replaces the class's). The Gateway's spec is what its
// class lets it set (allowedOverrides): rewriteClientIP and
// disableBaseHeaders only with the class's allowance.

// overlayNginx overlays the Gateway's NGINX-facing fields g on out (the
// class's, a copy).
func overlayNginx(out, g *v1alpha2.NginxProxySpec) {
	out.DisableHTTP2 = pick(g.DisableHTTP2, out.DisableHTTP2)
	out.UseClusterIP = pick(g.UseClusterIP, out.UseClusterIP)
	out.DisableSNIHostValidation = pick(g.DisableSNIHostValidation, out.DisableSNIHostValidation)
	out.WorkerProcesses = pick(g.WorkerProcesses, out.WorkerProcesses)
	out.WorkerRlimitNofile = pick(g.WorkerRlimitNofile, out.WorkerRlimitNofile)
	out.ServerTokens = pick(g.ServerTokens, out.ServerTokens)
	out.ZoneSize = pick(g.ZoneSize, out.ZoneSize)
	if g.DisableBaseHeaders != nil {
		out.DisableBaseHeaders = g.DisableBaseHeaders
	}
	if r := g.RewriteClientIP; r != nil {
		if out.RewriteClientIP == nil {
			out.RewriteClientIP = &v1alpha2.RewriteClientIP{}
		}
		out.RewriteClientIP.Mode = pick(r.Mode, out.RewriteClientIP.Mode)
		out.RewriteClientIP.SetIPRecursively = pick(r.SetIPRecursively, out.RewriteClientIP.SetIPRecursively)
		if r.TrustedAddresses != nil {
			out.RewriteClientIP.TrustedAddresses = r.TrustedAddresses
		}
	}
	out.Compression = overlayCompression(out.Compression, g.Compression)
	out.Telemetry = overlayTelemetry(out.Telemetry, g.Telemetry)
}

func overlayLogging(base, over *v1alpha2.NginxLogging) *v1alpha2.NginxLogging {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	base.ErrorLevel = pick(over.ErrorLevel, base.ErrorLevel)
	base.ErrorLogFormat = pick(over.ErrorLogFormat, base.ErrorLogFormat)
	base.AgentLevel = pick(over.AgentLevel, base.AgentLevel)
	if a := over.AccessLog; a != nil {
		if base.AccessLog == nil {
			base.AccessLog = &v1alpha2.NginxAccessLog{}
		}
		base.AccessLog.Disable = pick(a.Disable, base.AccessLog.Disable)
		base.AccessLog.Format = pick(a.Format, base.AccessLog.Format)
		base.AccessLog.Escape = pick(a.Escape, base.AccessLog.Escape)
	}
	return base
}

func overlayCompression(base, over *v1alpha2.Compression) *v1alpha2.Compression {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	base.Type = over.Type
	base.Level = pick(over.Level, base.Level)
	base.MinLength = pick(over.MinLength, base.MinLength)
	base.Buffers = pick(over.Buffers, base.Buffers)
	if over.MimeTypes != nil {
		base.MimeTypes = over.MimeTypes
	}
	if g := over.Gzip; g != nil {
		if base.Gzip == nil {
			base.Gzip = &v1alpha2.GzipSettings{}
		}
		base.Gzip.Vary = pick(g.Vary, base.Gzip.Vary)
		base.Gzip.HTTPVersion = pick(g.HTTPVersion, base.Gzip.HTTPVersion)
		if g.Disable != nil {
			base.Gzip.Disable = g.Disable
		}
		if g.Proxied != nil {
			base.Gzip.Proxied = g.Proxied
		}
	}
	return base
}

func overlayTelemetry(base, over *v1alpha2.Telemetry) *v1alpha2.Telemetry {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	if over.DisabledFeatures != nil {
		base.DisabledFeatures = over.DisabledFeatures
	}
	if e := over.Exporter; e != nil {
		if base.Exporter == nil {
			base.Exporter = &v1alpha2.TelemetryExporter{}
		}
		base.Exporter.Interval = pick(e.Interval, base.Exporter.Interval)
		base.Exporter.BatchSize = pick(e.BatchSize, base.Exporter.BatchSize)
		base.Exporter.BatchCount = pick(e.BatchCount, base.Exporter.BatchCount)
		base.Exporter.Endpoint = pick(e.Endpoint, base.Exporter.Endpoint)
	}
	base.ServiceName = pick(over.ServiceName, base.ServiceName)
	if over.SpanAttributes != nil {
		base.SpanAttributes = over.SpanAttributes
	}
	return base
}
