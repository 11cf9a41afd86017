package syntax

import (
	"sort"
	"strings"
)

// An access log format (NginxProxy logging.accessLog.format) is NGINX's
// log_format text: NGINX reads every '$' there as a variable, refuses the
// configuration for a '$' that starts no name and for a variable it does
// not have, and has no escape for a literal '$'. So a format is written
// with the variables of the allow-list below as variables and every other
// '$' as ${gw_dollar} (a literal '$', as in header values), split into
// strings NGINX reads in one token each (log_format joins them).
//
// The allow-list is what NGINX knows of the connection, the request and
// the response in the modules the data plane loads, less what carries
// credentials: the access log is read by whoever reads the data plane's
// logs (the Gateway's namespace), and the Gateway serves other
// namespaces' routes, so their users' Authorization, Proxy-Authorization
// and Cookie headers, session cookies and request bodies stay out of it.

// logVariables are the variables an access log format may read by name.
var logVariables = toSet(
	// The connection and the client.
	"binary_remote_addr", "connection", "connection_requests", "connection_time",
	"msec", "pid", "pipe", "proxy_protocol_addr", "proxy_protocol_port",
	"proxy_protocol_server_addr", "proxy_protocol_server_port", "realip_remote_addr",
	"realip_remote_port", "remote_addr", "remote_port", "server_addr", "server_name",
	"server_port", "time_iso8601", "time_local", "hostname", "nginx_version",
	// The request.
	"args", "content_length", "content_type", "document_uri", "host", "http2",
	"https", "is_args", "query_string", "remote_user", "request", "request_completion",
	"request_id", "request_length", "request_method", "request_time", "request_uri",
	"scheme", "server_protocol", "uri",
	// TLS.
	"ssl_alpn_protocol", "ssl_cipher", "ssl_client_fingerprint", "ssl_client_i_dn",
	"ssl_client_s_dn", "ssl_client_serial", "ssl_client_v_end", "ssl_client_v_remain",
	"ssl_client_v_start", "ssl_client_verify", "ssl_curve", "ssl_early_data",
	"ssl_protocol", "ssl_server_name", "ssl_session_reused",
	// The response and the upstream.
	"body_bytes_sent", "bytes_sent", "gzip_ratio", "status", "upstream_addr",
	"upstream_bytes_received", "upstream_bytes_sent", "upstream_connect_time",
	"upstream_header_time", "upstream_response_length", "upstream_response_time",
	"upstream_status",
	// The trace context (NGINX's OpenTelemetry module's names, which
	// Gatewall's configuration defines: nginx/config/tracing.go).
	"otel_trace_id", "otel_span_id", "otel_parent_id", "otel_parent_sampled",
)

// maxLogVariable bounds a variable's name, so that a format's strings
// stay within MaxToken (a header's name is as long as a client makes it).
const maxLogVariable = 256

// logVariablePrefixes are the families of variables named after a header
// or a query parameter.
var logVariablePrefixes = []string{"http_", "sent_http_", "upstream_http_", "arg_"}

// credentialVariables are the members of those families that carry
// credentials.
var credentialVariables = toSet(
	"http_authorization", "http_proxy_authorization", "http_cookie",
	"sent_http_set_cookie", "upstream_http_set_cookie",
)

func toSet(names ...string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// LogVariable says whether an access log format may read NGINX's variable
// name (without '$').
func LogVariable(name string) bool {
	if len(name) > maxLogVariable {
		return false
	}
	if logVariables[name] {
		return true
	}
	if credentialVariables[name] {
		return false
	}
	for _, p := range logVariablePrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) && lowerName(name) {
			return true
		}
	}
	return false
}

// lowerName says whether name is in NGINX's form of a header's variable
// (lower-case: NGINX lower-cases header names; $http_X_Foo names no
// header).
func lowerName(name string) bool { return strings.ToLower(name) == name }

// LogFormat is the access log format f as NGINX strings (each to be
// written with Quote and within MaxToken), and the variables it reads
// that are not on the allow-list, sorted: those are written as text.
// Variables are written ${name}, so text after one never extends its
// name. dollar says whether ${gw_dollar} is used.
func LogFormat(f string) (parts []string, refused []string, dollar bool) {
	var b strings.Builder
	seen := map[string]bool{}
	const chunk = 1024 // well within MaxToken, escapes doubled
	flush := func() {
		if b.Len() > 0 {
			parts = append(parts, b.String())
			b.Reset()
		}
	}
	for i := 0; i < len(f); {
		if b.Len() >= chunk {
			flush()
		}
		if f[i] != '$' {
			b.WriteByte(f[i])
			i++
			continue
		}
		name, n := variableAt(f[i:])
		if n > 0 && LogVariable(name) {
			b.WriteString("${" + name + "}")
			i += n
			continue
		}
		if n > 0 && !seen[name] {
			seen[name] = true
			refused = append(refused, name)
		}
		b.WriteString("${" + DollarVariable + "}")
		dollar = true
		i++
	}
	flush()
	sort.Strings(refused)
	return parts, refused, dollar
}

// LogVariables lists the variables an access log format may read by name,
// sorted (the families LogVariable also takes are not listed).
func LogVariables() []string {
	out := make([]string, 0, len(logVariables))
	for v := range logVariables {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
