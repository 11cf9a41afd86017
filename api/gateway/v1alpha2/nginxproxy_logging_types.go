package v1alpha2

// NginxErrorLevel is the level of NGINX's error log.
//
// +kubebuilder:validation:Enum=debug;info;notice;warn;error;crit;alert;emerg
type NginxErrorLevel string

// AgentLogLevel is the log level of nginx-agent. panic and fatal are
// NGINX Gateway Fabric's (nginx-agent v2's levels): nginx-agent v3 has
// none above error, which they stand for.
//
// +kubebuilder:validation:Enum=debug;info;warn;error;panic;fatal
type AgentLogLevel string

// NginxLogging sets the logs of the data plane.
//
// +kubebuilder:validation:XValidation:message="JSON-formatted error logs are not supported when errorLevel is debug",rule="!(has(self.errorLogFormat) && self.errorLogFormat == 'json' && has(self.errorLevel) && self.errorLevel == 'debug')"
type NginxLogging struct {
	// ErrorLevel is the level of NGINX's error log (error_log). Defaults to info.
	// +optional
	ErrorLevel *NginxErrorLevel `json:"errorLevel,omitempty"`

	// ErrorLogFormat is the format of NGINX's error log: default or json.
	// NGINX 1.22 from Debian writes its error log in its own format only
	// (a JSON error log needs NGINX Plus): json is accepted and reported
	// as not programmed in the NginxProxy's and the Gateway's status. As
	// with NGINX Gateway Fabric, json also makes the access log JSON
	// (time_local, remote_addr, remote_user, request, status,
	// body_bytes_sent, http_referer, http_user_agent, with JSON escaping)
	// when accessLog sets no format of its own. It cannot be json with
	// errorLevel debug.
	//
	// +optional
	ErrorLogFormat *NginxErrorLogFormat `json:"errorLogFormat,omitempty"`

	// AgentLevel is the log level of nginx-agent: debug, info, warn or
	// error; panic and fatal (NGINX Gateway Fabric's) are taken as error.
	// Defaults to info.
	// +optional
	AgentLevel *AgentLogLevel `json:"agentLevel,omitempty"`

	// AccessLog configures NGINX's access log, written to the NGINX
	// container's standard output (/dev/stdout, the only place NGINX
	// Gateway Fabric allows too): one line per request, in NGINX's
	// combined format unless format says otherwise.
	//
	// +optional
	AccessLog *NginxAccessLog `json:"accessLog,omitempty"`
}

// NginxErrorLogFormat is the format of NGINX's error log.
//
// +kubebuilder:validation:Enum=default;json
type NginxErrorLogFormat string

// Error log formats.
const (
	// NginxErrorLogFormatDefault is NGINX's own format.
	NginxErrorLogFormatDefault NginxErrorLogFormat = "default"
	// NginxErrorLogFormatJSON is JSON, which only NGINX Plus writes.
	NginxErrorLogFormatJSON NginxErrorLogFormat = "json"
)

// NginxAccessLog configures NGINX's access log.
type NginxAccessLog struct {
	// Disable turns the access log off.
	//
	// +optional
	Disable *bool `json:"disable,omitempty"`

	// Format is the text of each access log line (NGINX's log_format),
	// up to 4,096 characters: text, and NGINX variables written $name or
	// ${name} of an allow-list: what NGINX knows of the connection, the
	// request line, the response and the upstream ($remote_addr,
	// $remote_user, $time_local, $time_iso8601, $request, $request_method,
	// $request_uri, $uri, $args, $status, $body_bytes_sent, $bytes_sent,
	// $request_length, $request_time, $upstream_addr, $upstream_status,
	// $upstream_response_time, $ssl_protocol, ...), request and response
	// headers ($http_<name>, $sent_http_<name>, $upstream_http_<name>),
	// query parameters ($arg_<name>), and the trace context
	// ($otel_trace_id, $otel_span_id, $otel_parent_id,
	// $otel_parent_sampled). Left out, and written as text: the headers
	// that carry credentials (Authorization, Proxy-Authorization, Cookie,
	// Set-Cookie, and $cookie_<name>) and request bodies: whoever reads
	// the data plane's logs would read other tenants' users' credentials.
	// Any other '$' is written as a literal '$', and the NginxProxy's
	// status names the variables taken as text. Single quotes and line
	// breaks are refused (as NGINX Gateway Fabric does), and so are other
	// control characters but tab. Unset: NGINX's combined format, with the
	// trace context appended when telemetry is on.
	// See https://nginx.org/en/docs/http/ngx_http_log_module.html#log_format
	//
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^[^'\x00-\x08\x0A-\x1F\x7F]*$`
	Format *string `json:"format,omitempty"`

	// Escape is how characters of variables' values are escaped in the
	// log: default (", \ and bytes under 32 or over 126 as \xXX), json
	// (what JSON strings cannot hold) or none. none writes what clients
	// send as they send it (control characters included) into the log:
	// a client can then forge log lines or terminal escapes for whoever
	// reads it. Defaults to default.
	//
	// +optional
	Escape *NginxAccessLogEscape `json:"escape,omitempty"`
}

// NginxAccessLogEscape is how an access log escapes variables' values.
//
// +kubebuilder:validation:Enum=default;json;none
type NginxAccessLogEscape string

// Access log escapes.
const (
	NginxAccessLogEscapeDefault NginxAccessLogEscape = "default"
	NginxAccessLogEscapeJSON    NginxAccessLogEscape = "json"
	NginxAccessLogEscapeNone    NginxAccessLogEscape = "none"
)

// AgentLevelV3 is the level nginx-agent v3 logs at: the NginxProxy's, with
// panic and fatal (nginx-agent v2's) taken as error; "" when unset.
func (l *NginxLogging) AgentLevelV3() string {
	if l == nil || l.AgentLevel == nil {
		return ""
	}
	switch *l.AgentLevel {
	case "panic", "fatal":
		return "error"
	}
	return string(*l.AgentLevel)
}
