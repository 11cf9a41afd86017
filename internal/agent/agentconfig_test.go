package agent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func validParams() AgentConfigParams {
	return AgentConfigParams{
		ServerHost: "gatewall-agents.gatewall-system.svc",
		ServerPort: 8443,
		CAFile:     "/var/run/secrets/gatewall/ca.crt",
		TokenFile:  "/var/run/secrets/gatewall/token",
		Gateway:    Key{Namespace: "team-a", Name: "42"},
		LogLevel:   "warn",
	}
}

func TestAgentConfig(t *testing.T) {
	p := validParams()
	p.ReloadMonitoringPeriod = 1500 * time.Millisecond
	out, err := AgentConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := AgentConfig(p)
	if string(again) != string(out) {
		t.Fatal("not deterministic")
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, out)
	}
	want := map[string]any{
		"command": map[string]any{
			"server": map[string]any{"host": p.ServerHost, "port": float64(8443), "type": "grpc"},
			"auth":   map[string]any{"tokenpath": p.TokenFile},
			"tls":    map[string]any{"ca": p.CAFile, "server_name": p.ServerHost, "skip_verify": false},
		},
		"allowed_directories": []any{"/etc/app_protect", "/etc/nginx", "/usr/share/nginx/modules", "/var/cache/nginx", "/var/log/nginx", "/var/run/nginx"},
		"features":            []any{"configuration"},
		// "42" stays a string in the file (the agent still reads it as a number).
		"labels":            map[string]any{LabelGatewayName: "42", LabelGatewayNamespace: "team-a"},
		"log":               map[string]any{"level": "warn", "path": ""},
		"data_plane_config": map[string]any{"nginx": map[string]any{"reload_monitoring_period": "1.5s"}},
		"watchers":          map[string]any{"instance_watcher": map[string]any{"monitoring_frequency": "1s"}},
		"client": map[string]any{
			"backoff": map[string]any{"initial_interval": "500ms", "max_interval": "5s", "multiplier": float64(2)},
			"grpc":    map[string]any{"keepalive": map[string]any{"time": "10s", "timeout": "5s"}},
		},
	}
	// The server disconnects an agent that pings more often than it allows.
	if agentKeepAliveTime < serverKeepAliveMinTime {
		t.Errorf("agents ping every %s, the server allows pings every %s at most", agentKeepAliveTime, serverKeepAliveMinTime)
	}
	if diff := compare(got, want); diff != "" {
		t.Fatalf("%s\n%s", diff, out)
	}
	if !strings.Contains(string(out), `gatewall-gateway-name: "42"`) {
		t.Fatalf("the numeric Gateway name is not quoted:\n%s", out)
	}

	p = validParams()
	p.ServerName, p.AllowedDirectories, p.LogLevel = "agents.example", []string{"/etc/nginx"}, ""
	out, err = AgentConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"server_name: agents.example", "level: info", "- /etc/nginx\n"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("missing %q in\n%s", s, out)
		}
	}
	if strings.Contains(string(out), "data_plane_config") || strings.Contains(string(out), "/etc/app_protect") {
		t.Errorf("defaults leak in\n%s", out)
	}
}

func compare(got, want map[string]any) string {
	g, _ := yaml.Marshal(got)
	w, _ := yaml.Marshal(want)
	if string(g) != string(w) {
		return "got:\n" + string(g) + "want:\n" + string(w)
	}
	return ""
}

func TestAgentConfigInvalid(t *testing.T) {
	for name, mutate := range map[string]func(*AgentConfigParams){
		"no host":          func(p *AgentConfigParams) { p.ServerHost = "" },
		"port":             func(p *AgentConfigParams) { p.ServerPort = 70000 },
		"relative CA":      func(p *AgentConfigParams) { p.CAFile = "ca.crt" },
		"no token":         func(p *AgentConfigParams) { p.TokenFile = "" },
		"no gateway":       func(p *AgentConfigParams) { p.Gateway.Name = "" },
		"log level":        func(p *AgentConfigParams) { p.LogLevel = "trace" },
		"negative period":  func(p *AgentConfigParams) { p.ReloadMonitoringPeriod = -time.Second },
		"root allowed dir": func(p *AgentConfigParams) { p.AllowedDirectories = []string{"/"} },
	} {
		p := validParams()
		mutate(&p)
		if _, err := AgentConfig(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAgentConfigMetrics: metrics turn on the agent's metrics feature and a
// collector whose only pipeline takes NGINX's metrics, labels them with the
// Gateway and serves them to Prometheus; its configuration file is
// writable and in an allowed directory.
func TestAgentConfigMetrics(t *testing.T) {
	p := validParams()
	p.MetricsPort = 9113
	out, err := AgentConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Features           []string `json:"features"`
		AllowedDirectories []string `json:"allowed_directories"`
		Collector          map[string]any
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Features, ",") != "configuration,metrics" {
		t.Errorf("features %v", got.Features)
	}
	want := map[string]any{
		"config_path": "/var/run/nginx/nginx-agent-collector.yaml",
		"log":         map[string]any{"level": "warn", "path": "/dev/stderr"},
		"processors": map[string]any{"resource": map[string]any{"default": map[string]any{"attributes": []any{
			map[string]any{"key": "gateway_namespace", "action": "insert", "value": "team-a"},
			map[string]any{"key": "gateway_name", "action": "insert", "value": "42"},
		}}}},
		"exporters": map[string]any{"prometheus": map[string]any{"server": map[string]any{"host": "", "port": float64(9113)}}},
		"pipelines": map[string]any{"metrics": map[string]any{"default": map[string]any{
			"receivers": []any{"nginx_metrics"}, "processors": []any{"resource/default"}, "exporters": []any{"prometheus"},
		}}},
	}
	if diff := compare(got.Collector, want); diff != "" {
		t.Fatalf("%s\n%s", diff, out)
	}
	dir := filepath.Dir(want["config_path"].(string))
	if !slices.Contains(got.AllowedDirectories, dir) {
		t.Errorf("the collector's configuration is in %s, not an allowed directory %v", dir, got.AllowedDirectories)
	}

	p.MetricsPort, p.MetricsHost = 70000, "localhost"
	_, err = AgentConfig(p)
	for _, msg := range []string{"metrics port 70000 is out of range", `metrics host "localhost" is not an IP address`} {
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("error %v, want %q", err, msg)
		}
	}
}
