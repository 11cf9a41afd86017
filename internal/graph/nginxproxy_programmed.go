package graph

import (
	"fmt"
	"strings"

	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/syntax"
)

// What of an NginxProxy the data plane does not do. NGINX Gateway Fabric's
// NginxProxy has settings NGINX 1.22 from Debian cannot carry out (no
// OpenTelemetry module, no JSON error log, no Server header of one's own:
// NGINX Plus's), and a few Gatewall's data plane has no use for. Such an
// NginxProxy is accepted, so that NGF's manifests apply unchanged, and
// what is not done is named, field by field, in the NginxProxy's status
// and in the status of each Gateway whose effective settings have it.

// serverTokensOSS are the values of server_tokens NGINX OSS takes.
var serverTokensOSS = map[string]bool{"off": true, "on": true, "build": true}

// NotProgrammed lists what of an NginxProxy's settings the data plane does
// not carry out, each "field: why", in the order of the fields; nil when it
// carries out everything s sets.
func NotProgrammed(s *v1alpha2.NginxProxySpec) []string {
	if s == nil {
		return nil
	}
	var out []string
	if t := s.Telemetry; t != nil && s.TracingOn() {
		if fields := telemetryFields(t); fields != "" {
			out = append(out, "telemetry."+fields+": spans are not exported: NGINX 1.22 from Debian has no OpenTelemetry module; "+
				"the data plane passes W3C traceparent to backends, makes one for requests without it, and logs trace IDs")
		}
	}
	if l := s.Logging; l != nil {
		if l.ErrorLogFormat != nil && *l.ErrorLogFormat == v1alpha2.NginxErrorLogFormatJSON {
			note := "logging.errorLogFormat json: NGINX 1.22 writes its error log in its own format (a JSON error log needs NGINX Plus)"
			if l.AccessLog == nil || l.AccessLog.Format == nil || *l.AccessLog.Format == "" {
				note += "; the access log is JSON"
			}
			out = append(out, note)
		}
		if l.AgentLevel != nil && (*l.AgentLevel == "panic" || *l.AgentLevel == "fatal") {
			out = append(out, fmt.Sprintf("logging.agentLevel %s: nginx-agent v3 has no level above error, which it logs at", *l.AgentLevel))
		}
		if a := l.AccessLog; a != nil && a.Format != nil && (a.Disable == nil || !*a.Disable) {
			if _, refused, _ := syntax.LogFormat(*a.Format); len(refused) > 0 {
				out = append(out, "logging.accessLog.format: "+dollars(refused)+" written as text: an access log reads NGINX's variables of an allow-list only, "+
					"without the headers and cookies that carry credentials (docs/validation.md)")
			}
		}
	}
	if s.ServerTokens != nil && !serverTokensOSS[*s.ServerTokens] {
		out = append(out, "serverTokens "+conditions.Quote(*s.ServerTokens)+
			": NGINX 1.22 OSS takes on, off and build only (no Server header, or one of your own, needs NGINX Plus); off is used")
	}
	if n := s.WorkerRlimitNofile; n != nil && *n < v1alpha2.FilesForConnections(s.EffectiveWorkerConnections()) {
		out = append(out, fmt.Sprintf("workerRlimitNofile %d: raised to %d, a file for each of workerConnections' connections and one for its buffered body, and 64, "+
			"which the Gateway's connection budgets count on", *n, v1alpha2.FilesForConnections(s.EffectiveWorkerConnections())))
	}
	if s.ZoneSize != nil {
		out = append(out, "zoneSize: Gatewall's upstreams keep their endpoints and balancing state in the data plane's shared Lua dictionaries, "+
			"not in a zone of each upstream; an UpstreamSettingsPolicy's zoneSize still gives its Services' upstreams one")
	}
	if r := s.RewriteClientIP; r != nil {
		var hosts []string
		for _, a := range r.TrustedAddresses {
			if a.Type == v1alpha2.RewriteClientIPHostnameAddressType {
				hosts = append(hosts, a.Value)
			}
		}
		switch {
		case r.Mode == nil && len(r.TrustedAddresses) > 0:
			out = append(out, "rewriteClientIP.trustedAddresses: not used without a mode: the client's address is the connection's")
		case len(hosts) > 0:
			out = append(out, "rewriteClientIP.trustedAddresses "+strings.Join(hosts, ", ")+
				": not trusted: NGINX resolves a name once, when it loads its configuration, and refuses the configuration when it does not resolve; list addresses or CIDRs")
		}
		if r.SetIPRecursively != nil && *r.SetIPRecursively && (r.Mode == nil || *r.Mode != v1alpha2.RewriteClientIPModeXForwardedFor) {
			out = append(out, "rewriteClientIP.setIPRecursively: used with mode XForwardedFor only")
		}
	}
	return append(out, podNotProgrammed(s)...)
}

// telemetryFields names the telemetry fields that would configure span
// export: "exporter", "{exporter, spanAttributes}"; "" when none is set.
func telemetryFields(t *v1alpha2.Telemetry) string {
	var set []string
	if t.Exporter != nil {
		set = append(set, "exporter")
	}
	if t.ServiceName != nil {
		set = append(set, "serviceName")
	}
	if len(t.SpanAttributes) > 0 {
		set = append(set, "spanAttributes")
	}
	switch len(set) {
	case 0:
		return ""
	case 1:
		return set[0]
	}
	return "{" + strings.Join(set, ", ") + "}"
}

// dollars writes variable names as $name, joined.
func dollars(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = conditions.Quote("$" + n)
	}
	return strings.Join(out, ", ")
}
