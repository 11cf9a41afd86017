package agent

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"time"

	"sigs.k8s.io/yaml"
)

// DefaultAllowedDirectories are where the agent may write pushed files and
// read NGINX's: configuration and secrets (/etc/nginx), WAF bundles
// (/etc/app_protect), logs, pid and temp files, and dynamic modules.
func DefaultAllowedDirectories() []string {
	return []string{
		"/etc/app_protect",
		"/etc/nginx",
		"/usr/share/nginx/modules",
		"/var/cache/nginx",
		"/var/log/nginx",
		"/var/run/nginx",
	}
}

// AgentConfigParams are the settings of one data plane's nginx-agent.conf.
type AgentConfigParams struct {
	// ServerHost and ServerPort locate Gatewall's agent server, e.g. the
	// Service gatewall-agent.gatewall-system.svc and 8443.
	ServerHost string
	ServerPort int
	// CAFile is the path, in the data-plane container, of the CA bundle that
	// signed the server's certificate.
	CAFile string
	// ServerName is the name the server's certificate must hold; ServerHost
	// when empty.
	ServerName string
	// TokenFile is the path of the pod's projected ServiceAccount token
	// (bound to the pod, with the server's audience).
	TokenFile string
	// Gateway is the Gateway whose data plane this is; it becomes the labels
	// LabelGatewayName and LabelGatewayNamespace.
	Gateway Key
	// LogLevel is debug, info, warn or error (NginxProxy's agentLevel); info
	// when empty.
	LogLevel string
	// ReloadMonitoringPeriod is how long the agent watches NGINX's error log
	// files after a reload before it reports success; the agent's default
	// (10 s) when zero. Error logs to stderr are not watched.
	ReloadMonitoringPeriod time.Duration
	// AllowedDirectories are where files may be pushed;
	// DefaultAllowedDirectories when nil.
	AllowedDirectories []string
	// MetricsPort, when not zero, turns on the agent's metrics: it collects
	// NGINX's stub_status (the configuration's status server) and serves it
	// in Prometheus format on this port of the pod, labelled with the
	// Gateway's namespace and name.
	MetricsPort int
	// MetricsHost is the address the metrics are served on; every address
	// of the pod when empty.
	MetricsHost string
}

// The YAML shape of nginx-agent.conf (nginx-agent's internal/config types).
// The agent refuses unknown keys.
type agentConf struct {
	Command            agentCommand      `json:"command"`
	AllowedDirectories []string          `json:"allowed_directories"`
	Features           []string          `json:"features"`
	Labels             map[string]string `json:"labels"`
	Log                agentLog          `json:"log"`
	DataPlaneConfig    *agentDataPlane   `json:"data_plane_config,omitempty"`
	Watchers           agentWatchers     `json:"watchers"`
	Client             agentClient       `json:"client"`
	Collector          *agentCollector   `json:"collector,omitempty"`
}

// agentCollector is the agent's OpenTelemetry collector: NGINX's metrics,
// labelled with the Gateway, to a Prometheus endpoint. The agent adds the
// rest of its defaults (host metrics, an OTLP exporter to the command
// server); a pipeline named default replaces the agent's own, which would
// send every metric to Gatewall's agent server, which has no OTLP service.
type agentCollector struct {
	// ConfigPath is where the agent writes the collector's configuration:
	// in an allowed directory, and writable (/etc/nginx-agent is a
	// ConfigMap).
	ConfigPath string   `json:"config_path"`
	Log        agentLog `json:"log"`
	Processors struct {
		Resource map[string]resourceProcessor `json:"resource"`
	} `json:"processors"`
	Exporters struct {
		Prometheus struct {
			Server struct {
				Host string `json:"host"`
				Port int    `json:"port"`
			} `json:"server"`
		} `json:"prometheus"`
	} `json:"exporters"`
	Pipelines struct {
		Metrics map[string]agentPipeline `json:"metrics"`
	} `json:"pipelines"`
}

type resourceProcessor struct {
	Attributes []agentAttribute `json:"attributes"`
}

type agentAttribute struct {
	Key    string `json:"key"`
	Action string `json:"action"`
	Value  string `json:"value"`
}

type agentPipeline struct {
	Receivers  []string `json:"receivers"`
	Processors []string `json:"processors"`
	Exporters  []string `json:"exporters"`
}

// Metric labels of the data plane's metrics.
const (
	MetricLabelGatewayNamespace = "gateway_namespace"
	MetricLabelGatewayName      = "gateway_name"
)

// collectorConfigPath is in /var/run/nginx, an allowed directory the pod
// can write.
const collectorConfigPath = "/var/run/nginx/nginx-agent-collector.yaml"

// metricsCollector is the collector serving the metrics on port. Its only
// receiver is the agent's NGINX receiver ("nginx_metrics" names the ones
// the agent finds from the configuration's stub_status), so only NGINX's
// metrics are collected, once a minute (the agent's fixed interval).
func metricsCollector(p AgentConfigParams) *agentCollector {
	c := &agentCollector{ConfigPath: collectorConfigPath}
	// The collector writes a file at its log path when it starts; stderr
	// is the container's log.
	c.Log = agentLog{Level: p.logLevel(), Path: "/dev/stderr"}
	c.Processors.Resource = map[string]resourceProcessor{"default": {Attributes: []agentAttribute{
		{Key: MetricLabelGatewayNamespace, Action: "insert", Value: p.Gateway.Namespace},
		{Key: MetricLabelGatewayName, Action: "insert", Value: p.Gateway.Name},
	}}}
	c.Exporters.Prometheus.Server.Host = p.MetricsHost
	c.Exporters.Prometheus.Server.Port = p.MetricsPort
	c.Pipelines.Metrics = map[string]agentPipeline{"default": {
		Receivers: []string{"nginx_metrics"}, Processors: []string{"resource/default"}, Exporters: []string{"prometheus"},
	}}
	return c
}

// logLevel is the agent's log level; info when unset.
func (p AgentConfigParams) logLevel() string {
	if p.LogLevel == "" {
		return "info"
	}
	return p.LogLevel
}

type agentClient struct {
	Backoff struct {
		InitialInterval string  `json:"initial_interval"`
		MaxInterval     string  `json:"max_interval"`
		Multiplier      float64 `json:"multiplier"`
	} `json:"backoff"`
	GRPC struct {
		KeepAlive struct {
			Time    string `json:"time"`
			Timeout string `json:"timeout"`
		} `json:"keepalive"`
	} `json:"grpc"`
}

// The agent pings the server after agentKeepAliveTime without traffic and
// drops the connection when no answer comes within agentKeepAliveTimeout:
// an agent whose server vanished without closing its connections (a
// manager pod killed, a node lost, packets dropped) reconnects, to the new
// leader, within 15 s instead of the agent's default 30 s (20 s + 10 s).
// The server allows pings this often (serverKeepAliveMinTime).
const (
	agentKeepAliveTime    = 10 * time.Second
	agentKeepAliveTimeout = 5 * time.Second
)

// The agent retries what failed (connecting, its Subscribe stream, a file
// download) after agentBackoffInitial, then doubling up to agentBackoffMax.
// The agent's defaults (1 s, ×3, up to 20 s) made an agent reconnect up to
// 30 s after a new leader served (takeover, measured 41–43 s after the
// kill): the retries of a minute without a control plane (a takeover, a
// network cut) grow past 20 s, and the first one after it is back waits
// that long. At most one connection attempt in 5 s per data-plane pod costs
// the control plane little.
const (
	agentBackoffInitial    = 500 * time.Millisecond
	agentBackoffMax        = 5 * time.Second
	agentBackoffMultiplier = 2
)

type agentCommand struct {
	Server struct {
		Host string `json:"host"`
		Port int    `json:"port"`
		Type string `json:"type"`
	} `json:"server"`
	Auth struct {
		TokenPath string `json:"tokenpath"`
	} `json:"auth"`
	TLS struct {
		CA         string `json:"ca"`
		ServerName string `json:"server_name"`
		SkipVerify bool   `json:"skip_verify"`
	} `json:"tls"`
}

type agentLog struct {
	Level string `json:"level"`
	// Path "" logs to stderr, which is what a container wants.
	Path string `json:"path"`
}

type agentDataPlane struct {
	NGINX struct {
		ReloadMonitoringPeriod string `json:"reload_monitoring_period"`
	} `json:"nginx"`
}

type agentWatchers struct {
	InstanceWatcher struct {
		MonitoringFrequency string `json:"monitoring_frequency"`
	} `json:"instance_watcher"`
}

// instanceMonitoringFrequency is how often the agent looks for NGINX. The
// agent connects only once it found NGINX, a tick after it started, so the
// agent's default (5 s) would delay every new pod's configuration by 5 s;
// a data-plane container has a handful of processes to scan.
const instanceMonitoringFrequency = time.Second

// AgentConfig returns the nginx-agent.conf (YAML) of one data plane.
func AgentConfig(p AgentConfigParams) ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("agent configuration for Gateway %s: %w", p.Gateway, err)
	}
	var c agentConf
	c.Command.Server.Host = p.ServerHost
	c.Command.Server.Port = p.ServerPort
	c.Command.Server.Type = "grpc"
	c.Command.Auth.TokenPath = p.TokenFile
	c.Command.TLS.CA = p.CAFile
	c.Command.TLS.ServerName = p.ServerName
	if c.Command.TLS.ServerName == "" {
		c.Command.TLS.ServerName = p.ServerHost
	}
	c.AllowedDirectories = slices.Clone(p.AllowedDirectories)
	if c.AllowedDirectories == nil {
		c.AllowedDirectories = DefaultAllowedDirectories()
	}
	slices.Sort(c.AllowedDirectories)
	// Configuration, and metrics when asked for (they start the agent's
	// OpenTelemetry collector); the file watcher would report hand edits
	// Gatewall ignores.
	c.Features = []string{"configuration"}
	if p.MetricsPort != 0 {
		c.Features = append(c.Features, "metrics")
		c.Collector = metricsCollector(p)
	}
	c.Labels = map[string]string{LabelGatewayName: p.Gateway.Name, LabelGatewayNamespace: p.Gateway.Namespace}
	c.Log.Level = p.logLevel()
	if p.ReloadMonitoringPeriod > 0 {
		c.DataPlaneConfig = &agentDataPlane{}
		c.DataPlaneConfig.NGINX.ReloadMonitoringPeriod = p.ReloadMonitoringPeriod.String()
	}
	c.Watchers.InstanceWatcher.MonitoringFrequency = instanceMonitoringFrequency.String()
	c.Client.Backoff.InitialInterval = agentBackoffInitial.String()
	c.Client.Backoff.MaxInterval = agentBackoffMax.String()
	c.Client.Backoff.Multiplier = agentBackoffMultiplier
	c.Client.GRPC.KeepAlive.Time = agentKeepAliveTime.String()
	c.Client.GRPC.KeepAlive.Timeout = agentKeepAliveTimeout.String()
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("marshaling the agent configuration: %w", err)
	}
	return append([]byte("# nginx-agent.conf written by Gatewall for Gateway "+p.Gateway.String()+"\n"), out...), nil
}

func (p AgentConfigParams) validate() error {
	var errs []error
	if p.ServerHost == "" {
		errs = append(errs, errors.New("server host is empty"))
	}
	if p.ServerPort < 1 || p.ServerPort > 65535 {
		errs = append(errs, fmt.Errorf("server port %d is out of range", p.ServerPort))
	}
	for _, f := range []struct{ what, path string }{{"CA file", p.CAFile}, {"token file", p.TokenFile}} {
		if !filepath.IsAbs(f.path) {
			errs = append(errs, fmt.Errorf("%s %q is not an absolute path", f.what, f.path))
		}
	}
	if p.Gateway.Name == "" || p.Gateway.Namespace == "" {
		errs = append(errs, errors.New("the Gateway's name and namespace are required"))
	}
	if p.LogLevel != "" && !slices.Contains([]string{"debug", "info", "warn", "error"}, p.LogLevel) {
		errs = append(errs, fmt.Errorf("log level %q is not debug, info, warn or error", p.LogLevel))
	}
	if p.MetricsPort < 0 || p.MetricsPort > 65535 {
		errs = append(errs, fmt.Errorf("metrics port %d is out of range", p.MetricsPort))
	}
	if p.MetricsHost != "" && net.ParseIP(p.MetricsHost) == nil {
		errs = append(errs, fmt.Errorf("metrics host %q is not an IP address", p.MetricsHost))
	}
	if p.ReloadMonitoringPeriod < 0 {
		errs = append(errs, errors.New("reload monitoring period is negative"))
	}
	for _, d := range p.AllowedDirectories {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d || d == "/" {
			errs = append(errs, fmt.Errorf("allowed directory %q is not an absolute, clean path below /", d))
		}
	}
	return errors.Join(errs...)
}
