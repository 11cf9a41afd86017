package manager

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/agent"
	"github.com/gatewall/gatewall/internal/controller"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/endpointfeed"
	"github.com/gatewall/gatewall/internal/metrics"
	"github.com/gatewall/gatewall/internal/podseal"
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
	// TLSDir is where TLSSecret is mounted (tls.crt, tls.key, ca.crt), if
	// it is: the files are read again when the kubelet updates them. ""
	// reads the Secret from the API server, every 30 s. Either way nothing
	// is written to disk.
	TLSDir string
	// Images of the data-plane containers (provisioner.DefaultImages for
	// those left empty).
	Images provisioner.Images
	// PullSecrets name Secrets ([namespace/]name) with registry
	// credentials for those images, copied into each Gateway's namespace
	// and listed in its data-plane pods' imagePullSecrets.
	PullSecrets []string
	// ReloadMonitoringPeriod is how long agents watch NGINX's error log
	// after a reload before reporting success (0: the agent's default, 10 s).
	// Every successful push takes at least this long.
	ReloadMonitoringPeriod time.Duration
	// Observe, if set, receives the agent server's protocol events (for
	// metrics and tests); it must return quickly.
	Observe func(agent.Event)
	// PodName is the manager's own pod ($POD_NAME, in Namespace), if it runs
	// in one: the leader labels it AgentServerLabel once it listens, and
	// every replica removes the label at start.
	PodName string
	// AnyPeerAddress accepts an agent's token from any address, not only
	// from its pod's (agent.Options.AnyPeerAddress): for networks that
	// translate pods' addresses on their way to the manager.
	AnyPeerAddress bool
}

// setupAgent builds the agent server (run by the leader only), the data
// plane backed by it, and the provisioning settings.
func setupAgent(mgr ctrl.Manager, cfg *rest.Config, opts Options, notifier *controller.Notifier) (dataplane.DataPlane, *controller.Provisioning, error) {
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
	// A replica starts as a follower, whatever its pod said before (a
	// restarted container keeps its pod's labels).
	self := leaderPod{c: uncached, key: types.NamespacedName{Namespace: opts.Namespace, Name: a.PodName}}
	if err := self.set(ctx, false); err != nil {
		return nil, nil, err
	}
	names := []string{serverName, "localhost", "127.0.0.1"}
	candidate := newSealKey()
	secret, err := ensureAgentTLS(ctx, uncached, secretKey, names, opts.ControllerName, candidate)
	if err != nil {
		return nil, nil, err
	}
	sealKey, err := ensureSealKey(ctx, uncached, secret, candidate)
	if err != nil {
		return nil, nil, err
	}
	certs, err := newAgentTLS(a.TLSDir, secret)
	if err != nil {
		return nil, nil, err
	}
	var pullSecrets []types.NamespacedName
	for _, s := range a.PullSecrets {
		k, err := SecretName(s, opts.Namespace)
		if err != nil {
			return nil, nil, fmt.Errorf("--nginx-docker-secret: %w", err)
		}
		pullSecrets = append(pullSecrets, k)
	}
	log := ctrl.Log.WithName("agent")
	feed, err := endpointfeed.NewServer(endpointfeed.Options{
		Identify: func(ctx context.Context) (types.NamespacedName, types.NamespacedName, bool) {
			id, ok := agent.IdentityFrom(ctx)
			return id.Pod, id.Gateway, ok
		},
		OnChange: notifier.NotifyGateway,
		Observe:  observeEndpointAck,
		Log:      ctrl.Log.WithName("endpoints"),
	})
	if err != nil {
		return nil, nil, err
	}
	metrics.SetEndpointsSource(func() map[types.NamespacedName]metrics.EndpointVersions { return endpointVersions(feed.Statuses()) })
	server, err := agent.NewServer(agent.Options{
		// Pods are read uncached: a cache would watch every pod in the cluster.
		Authenticator: agent.NewTokenReviewAuthenticator(uncached, provisioner.TokenAudience,
			agent.RequirePod(dataPlanePod(uncached, opts.ControllerName, sealKey))),
		AnyPeerAddress: a.AnyPeerAddress,
		TLS:            certs.TLSConfig(),
		OnChange:       notifier.NotifyGateway,
		Observe:        logEvents(log.V(AgentEventsVerbosity), newAgentMetrics().then(a.Observe)),
		Log:            log,
		// Each pod's endpoints client, on the agents' port and credentials.
		Services: feed.Register,
	})
	if err != nil {
		return nil, nil, err
	}
	metrics.SetAgentsSource(server.Connected)
	// Only the leader serves agents: only it publishes configurations.
	serve := manager.RunnableFunc(func(ctx context.Context) error {
		l, err := net.Listen("tcp", a.ListenAddress)
		if err != nil {
			return fmt.Errorf("agent server: %w", err)
		}
		// The agent Service sends agents to this pod from now on.
		if err := self.set(ctx, true); err != nil {
			l.Close()
			return fmt.Errorf("agent server: %w", err)
		}
		go certs.poll(ctx, uncached, secretKey, names, opts.ControllerName, sealKey, log)
		return server.Serve(ctx, l)
	})
	if err := mgr.Add(serve); err != nil {
		return nil, nil, err
	}
	return dataplane.NewAgentDataPlane(server, feed), &controller.Provisioning{
		AgentHost: host, AgentPort: port, ServerName: serverName,
		CA: certs.CA, ReloadMonitoringPeriod: a.ReloadMonitoringPeriod,
		Images: provisioner.Images{
			NGINX:        cmp.Or(a.Images.NGINX, provisioner.DefaultImages.NGINX),
			NGINXWAF:     a.Images.NGINXWAF,
			WAFEnforcer:  cmp.Or(a.Images.WAFEnforcer, provisioner.DefaultImages.WAFEnforcer),
			WAFConfigMgr: cmp.Or(a.Images.WAFConfigMgr, provisioner.DefaultImages.WAFConfigMgr),
		},
		APIReader:   mgr.GetAPIReader(),
		Applied:     provisioner.NewApplied(),
		PullSecrets: pullSecrets,
		SealKey:     sealKey,
	}, nil
}

// dataPlanePod checks that a pod is the data plane of the Gateway its
// label names, as this installation provisions it: the Gateway exists and
// its class is this controller's, the pod runs as the data plane's
// ServiceAccount, and its spec is one the manager rendered for that
// Gateway (its seal verifies under key: package podseal). The Gateway is
// read from the API server (agents authenticate rarely: their reviews are
// cached). A Gateway whose class another controller serves is refused: its
// data plane's agent reached the wrong Gatewall installation, which would
// never configure it.
func dataPlanePod(c client.Client, controller string, key []byte) agent.PodCheck {
	return func(ctx context.Context, gw agent.Key, pod *corev1.Pod) error {
		g := &gatewayv1.Gateway{}
		if err := c.Get(ctx, gw, g); err != nil {
			return retryUnlessNotFound(err)
		}
		class := &gatewayv1.GatewayClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: string(g.Spec.GatewayClassName)}, class); err != nil {
			return retryUnlessNotFound(err)
		}
		if string(class.Spec.ControllerName) != controller {
			return fmt.Errorf("Gateway %s is of GatewayClass %s, which controller %q serves, not this Gatewall (%q): its data plane reached the wrong installation (its --agent-server-address)",
				gw, class.Name, class.Spec.ControllerName, controller)
		}
		if sa := provisioner.Name(g); pod.Spec.ServiceAccountName != sa {
			return fmt.Errorf("it runs as ServiceAccount %q, not %q, which the data plane of Gateway %s runs as", pod.Spec.ServiceAccountName, sa, gw)
		}
		return podseal.Verify(key, g.UID, pod)
	}
}

// retryUnlessNotFound makes err an agent.RetryLater unless it says the
// object does not exist: a deleted Gateway will not come back for a pod.
func retryUnlessNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return err
	}
	return &agent.RetryLater{Err: err}
}

// AgentEventsVerbosity is the log verbosity (--zap-log-level) at which every
// agent protocol event is logged ("agent event", with its type, gateway,
// pod, version, path and message): what a test or an operator reads to see
// a push's steps from outside the manager's process.
const AgentEventsVerbosity = 2

// logEvents logs each agent event on log (when it is enabled) and passes it
// on to next, if any. Refusals are left to the agent server, which logs
// them sampled: any pod can send them in a flood.
func logEvents(log logr.Logger, next func(agent.Event)) func(agent.Event) {
	return func(ev agent.Event) {
		if log.Enabled() && ev.Type != agent.EventRefused {
			log.Info("agent event", "type", string(ev.Type), "gateway", ev.Key.String(), "pod", ev.Pod.String(),
				"version", ev.Version, "path", ev.Path, "message", ev.Message)
		}
		if next != nil {
			next(ev)
		}
	}
}
