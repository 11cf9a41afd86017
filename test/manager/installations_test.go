package manager_test

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/manager"
)

// TestInstallationsKeepTheirAgentTLS: the agent TLS Secret is one
// installation's (its certificate names that installation's agent server,
// its CA is what that installation's data planes trust). A second
// installation given the same Secret (default flags in the same namespace)
// refuses to start with an error naming both installations; with its own
// Secret it starts.
func TestInstallationsKeepTheirAgentTLS(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	opts := func(controller, secret string) manager.Options {
		return manager.Options{
			ControllerName:   controller,
			GatewayClassName: "installations",
			Namespace:        manager.DefaultNamespace,
			MetricsAddr:      "0",
			ProbeAddr:        "0",
			Agent: manager.AgentOptions{
				ListenAddress: "127.0.0.1:0",
				ServerAddress: "gatewall-agent.test:8443",
				TLSSecret:     secret,
			},
		}
	}
	const first, second = "example.com/first-installation", "example.com/second-installation"
	if _, err := manager.New(env.Config, opts(first, "installations-agent-tls")); err != nil {
		t.Fatalf("first installation: %v", err)
	}
	// Made again by the same installation (a restart), the Secret is kept.
	if _, err := manager.New(env.Config, opts(first, "installations-agent-tls")); err != nil {
		t.Fatalf("first installation, restarted: %v", err)
	}
	_, err := manager.New(env.Config, opts(second, "installations-agent-tls"))
	if err == nil || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), second) {
		t.Fatalf("a second installation given the first's agent TLS Secret: err = %v, want a refusal naming both controllers", err)
	}
	if _, err := manager.New(env.Config, opts(second, "installations-second-agent-tls")); err != nil {
		t.Fatalf("a second installation with its own agent TLS Secret: %v", err)
	}
}
