package manager

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/controller"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// AgentOptions configure the nginx-agent server and data-plane provisioning.
type AgentOptions struct {
	// ListenAddress serves the agents; "" runs no agent server: nothing is
	// provisioned and configurations are held, never applied.
	ListenAddress string
	// ServerAddress is host:port the agents connect to.
	ServerAddress string
	// ServerName is the name agents verify in Gatewall's certificate
	// (default: the host of ServerAddress).
	ServerName string
	// TLSSecret holds the server certificate and the CA the agents trust
	// ([namespace/]name); created with a new CA when missing.
	TLSSecret string
	// Images of the data-plane containers.
	Images provisioner.Images
	// ReloadMonitoringPeriod is how long agents watch NGINX after a reload
	// before reporting success (0: the agent's default).
	ReloadMonitoringPeriod time.Duration
	// Observe, if set, receives the agent server's protocol events (for
	// metrics and tests); it must return quickly.
	Observe func(agent.Event)
}

// setupAgent builds the agent server (run by the leader only), the data
// plane backed by it, and the provisioning settings.
func setupAgent(mgr ctrl.Manager, cfg *rest.Config, opts Options, notifier *controller.Notifier) (controller.DataPlane, *controller.Provisioning, error) {
	a := opts.Agent
	host, portText, err := net.SplitHostPort(a.ServerAddress)
	if err != nil {
		return nil, nil, fmt.Errorf("--agent-server-address %q: %w", a.ServerAddress, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, nil, fmt.Errorf("--agent-server-address %q: bad port", a.ServerAddress)
	}
	serverName := a.ServerName
	if serverName == "" {
		serverName = host
	}
	secretKey, err := SecretName(a.TLSSecret, opts.Namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("--agent-tls-secret: %w", err)
	}
	uncached, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret, err := ensureAgentTLS(ctx, uncached, secretKey, []string{serverName, "localhost", "127.0.0.1"})
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "gatewall-agent-tls-")
	if err != nil {
		return nil, nil, err
	}
	if err := writeAgentTLS(secret, dir); err != nil {
		return nil, nil, err
	}
	tlsConfig, err := agent.NewReloadingTLSConfig(filepath.Join(dir, agentTLSCert), filepath.Join(dir, agentTLSKey))
	if err != nil {
		return nil, nil, err
	}
	server, err := agent.NewServer(agent.Options{
		// Pods are read uncached: a cache would watch every pod in the cluster.
		Authenticator: agent.NewTokenReviewAuthenticator(uncached, provisioner.TokenAudience),
		TLS:           tlsConfig,
		OnChange:      func(agent.Key) { notifier.Notify() },
		Observe:       a.Observe,
		Log:           ctrl.Log.WithName("agent"),
	})
	if err != nil {
		return nil, nil, err
	}
	// Only the leader serves agents: only it publishes configurations.
	serve := manager.RunnableFunc(func(ctx context.Context) error {
		l, err := net.Listen("tcp", a.ListenAddress)
		if err != nil {
			return fmt.Errorf("agent server: %w", err)
		}
		go syncAgentTLS(ctx, uncached, secretKey, dir)
		return server.Serve(ctx, l)
	})
	if err := mgr.Add(serve); err != nil {
		return nil, nil, err
	}
	return controller.NewAgentDataPlane(server), &controller.Provisioning{
		AgentHost: host, AgentPort: port, ServerName: serverName,
		CAFile: filepath.Join(dir, agentTLSCA), Images: a.Images, ReloadMonitoringPeriod: a.ReloadMonitoringPeriod,
	}, nil
}

// syncAgentTLS rewrites the certificate files when the Secret changes, so
// the server serves a rotated certificate and provisioning hands out a
// rotated CA without a restart.
func syncAgentTLS(ctx context.Context, c client.Client, key types.NamespacedName, dir string) {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	var last []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s, err := ensureAgentTLS(ctx, c, key, nil)
		if err != nil {
			ctrl.Log.WithName("agent").Error(err, "reading the agent TLS Secret")
			continue
		}
		cur := bytes.Join([][]byte{s.Data[agentTLSCert], s.Data[agentTLSKey], s.Data[agentTLSCA]}, nil)
		if bytes.Equal(cur, last) {
			continue
		}
		if err := writeAgentTLS(s, dir); err != nil {
			ctrl.Log.WithName("agent").Error(err, "writing the agent TLS files")
			continue
		}
		last = cur
	}
}
