package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// DefaultNamespaceForFlags is the namespace flag defaults assume.
const DefaultNamespaceForFlags = manager.DefaultNamespace

// runManager parses the manager's flags and runs it until SIGTERM or SIGINT.
func runManager(args []string) error {
	fs := flag.NewFlagSet("gatewall", flag.ContinueOnError)
	opts := manager.Options{}
	fs.StringVar(&opts.ControllerName, "gateway-ctlr-name", manager.DefaultControllerName,
		"The controllerName of the GatewayClasses Gatewall serves.")
	fs.StringVar(&opts.GatewayClassName, "gatewayclass", manager.DefaultGatewayClassName,
		"The name of the GatewayClass Gatewall serves.")
	fs.StringVar(&opts.Namespace, "namespace", envOr("POD_NAMESPACE", manager.DefaultNamespace),
		"The namespace Gatewall runs in (default from $POD_NAMESPACE).")
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080",
		"The address the metrics endpoint binds to; 0 turns it off.")
	fs.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081",
		"The address the /healthz and /readyz endpoints bind to.")
	fs.BoolVar(&opts.LeaderElection, "leader-elect", true,
		"Elect a leader so only one replica reconciles at a time.")
	fs.StringVar(&opts.LeaderElectionID, "leader-election-id", "gatewall-leader",
		"The name of the leader election Lease.")
	fs.StringVar(&opts.PLM.StorageURL, "plm-storage-url", "",
		"PLM storage (S3-compatible) URL, http:// or https://; required for WAF.")
	fs.StringVar(&opts.PLM.CredentialsSecret, "plm-storage-credentials-secret", "",
		"Secret ([namespace/]name) whose seaweedfs_admin_secret is the S3 secret key (access key id admin).")
	fs.StringVar(&opts.PLM.CASecret, "plm-storage-ca-secret", "",
		"Secret ([namespace/]name) whose ca.crt verifies the PLM storage server.")
	fs.StringVar(&opts.PLM.ClientSSLSecret, "plm-storage-client-ssl-secret", "",
		"Secret ([namespace/]name) with tls.crt and tls.key for mutual TLS to PLM storage.")
	fs.BoolVar(&opts.PLM.SkipVerify, "plm-storage-skip-verify", false,
		"Skip verification of the PLM storage server's certificate (development only).")
	fs.StringVar(&opts.PLM.CacheDir, "plm-cache-dir", "/var/cache/gatewall/plm",
		"Directory for fetched WAF bundles (verified, by sha256); a persistent volume keeps them across restarts.")
	fs.StringVar(&opts.PLM.APIGroup, "plm-api-group", "",
		"Force the PLM API group (appprotect.f5.com or waf.f5.com); empty uses whichever CRD is installed.")
	fs.StringVar(&opts.Agent.ListenAddress, "agent-listen-address", "",
		"Address the nginx-agent server listens on (e.g. :8443); empty runs no agent server and provisions no data plane.")
	fs.StringVar(&opts.Agent.ServerAddress, "agent-server-address", "gatewall-agent."+envOr("POD_NAMESPACE", DefaultNamespaceForFlags)+".svc:8443",
		"host:port the data planes' agents connect to.")
	fs.StringVar(&opts.Agent.ServerName, "agent-server-name", "",
		"Name agents verify in Gatewall's certificate (default: the host of --agent-server-address).")
	fs.StringVar(&opts.Agent.TLSSecret, "agent-tls-secret", "gatewall-agent-tls",
		"Secret ([namespace/]name) with the agent server's certificate and CA; created when missing.")
	fs.StringVar(&opts.Agent.Images.NGINX, "nginx-image", provisioner.DefaultImages.NGINX, "Default data-plane image (NGINX with nginx-agent).")
	fs.StringVar(&opts.Agent.Images.WAFEnforcer, "waf-enforcer-image", provisioner.DefaultImages.WAFEnforcer, "Default WAF enforcer image.")
	fs.StringVar(&opts.Agent.Images.WAFConfigMgr, "waf-config-mgr-image", provisioner.DefaultImages.WAFConfigMgr, "Default WAF config manager image.")
	qps := fs.Float64("kube-api-qps", 50,
		"Requests per second to the API server (every reconcile applies the Gateway's data-plane objects and writes statuses).")
	burst := fs.Int("kube-api-burst", 100, "Burst of requests to the API server above --kube-api-qps.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("starting manager", "controllerName", opts.ControllerName,
		"gatewayClass", opts.GatewayClassName, "namespace", opts.Namespace)
	return mgr.Start(ctrl.SetupSignalHandler())
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
