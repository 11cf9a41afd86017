package v1alpha2

// NginxErrorLevel is the level of NGINX's error log.
//
// +kubebuilder:validation:Enum=debug;info;notice;warn;error;crit;alert;emerg
type NginxErrorLevel string

// AgentLogLevel is the log level of nginx-agent.
//
// +kubebuilder:validation:Enum=debug;info;warn;error
type AgentLogLevel string

// NginxLogging sets the log levels of the data plane.
type NginxLogging struct {
	// ErrorLevel is the level of NGINX's error log (error_log). Defaults to info.
	// +optional
	ErrorLevel *NginxErrorLevel `json:"errorLevel,omitempty"`

	// AgentLevel is the log level of nginx-agent. Defaults to info.
	// +optional
	AgentLevel *AgentLogLevel `json:"agentLevel,omitempty"`
}
