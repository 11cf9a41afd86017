package manager

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/provisioner"
)

// DefaultReloadMonitoringPeriod is how long agents watch NGINX's error log
// after a reload. The agent's own default, 10 s, is added to every push (a
// successful reload waits for the whole period), and a pod serves the newest
// configuration only after the pushes before it. What the period catches is
// what `nginx -t`, run on the same files just before, cannot: errors of the
// running master applying the reload (ports it cannot bind, for example),
// which NGINX logs as soon as it has parsed the configuration: 0.1 s for 100
// routes and 0.7 s for 1,000 as measured here (docs/DESIGN: reload times).
// 2 s covers that with room to spare; raise it for Gateways with several
// thousand routes.
const DefaultReloadMonitoringPeriod = 2 * time.Second

// BindFlags registers the manager's flags on fs, filling opts when fs is
// parsed. The defaults are for a manager in a cluster, in the namespace in
// $POD_NAMESPACE.
func BindFlags(fs *flag.FlagSet, opts *Options) {
	namespace := envOr("POD_NAMESPACE", DefaultNamespace)
	fs.StringVar(&opts.ControllerName, "gateway-ctlr-name", DefaultControllerName,
		"The controllerName of the GatewayClasses Gatewall serves.")
	fs.StringVar(&opts.GatewayClassName, "gatewayclass", DefaultGatewayClassName,
		"The name of the GatewayClass Gatewall serves.")
	fs.StringVar(&opts.Namespace, "namespace", namespace,
		"The namespace Gatewall runs in (default from $POD_NAMESPACE).")
	fs.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080",
		"The address the metrics endpoint binds to; 0 turns it off.")
	fs.StringVar(&opts.MetricsCertDir, "metrics-cert-dir", "",
		"A directory with tls.crt and tls.key for the metrics endpoint, reloaded when they change (a mounted Secret, say); empty: a self-signed certificate made at start.")
	fs.BoolFunc("metrics-secure",
		"Serve metrics over HTTPS to clients whose token the API server authorizes to get /metrics (the gatewall-metrics-reader ClusterRole); false serves plain HTTP to anyone (default true).",
		func(v string) error {
			secure, err := strconv.ParseBool(v)
			opts.MetricsInsecure = !secure
			return err
		})
	fs.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081",
		"The address the /healthz and /readyz endpoints bind to.")
	fs.StringVar(&opts.PprofAddr, "pprof-bind-address", "0",
		"The address Go's profiles (/debug/pprof/) are served on; 0 turns them off.")
	fs.BoolVar(&opts.LeaderElection, "leader-elect", true,
		"Elect a leader so only one replica reconciles at a time.")
	fs.StringVar(&opts.LeaderElectionID, "leader-election-id", "",
		"The name of the leader election Lease (default: gatewall-leader-<hash of --gateway-ctlr-name>, one per installation).")
	fs.StringVar(&opts.PLM.StorageURL, "plm-storage-url", "",
		"PLM storage (S3-compatible) URL, http:// or https://; required for WAF.")
	fs.StringVar(&opts.PLM.Bucket, "plm-storage-bucket", "",
		"The bucket PLM stores its bundles in; required with --plm-storage-url. A bundle location elsewhere is refused in the policy's status, never fetched.")
	fs.StringVar(&opts.PLM.Prefix, "plm-storage-prefix", "",
		"The folder of --plm-storage-bucket PLM stores its bundles in (empty: the whole bucket). A bundle location outside it is refused.")
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
	fs.Func("plm-cache-max-size",
		"Most bytes of WAF bundles kept in --plm-cache-dir, and so in memory (a Kubernetes quantity such as 256Mi); a bundle that does not fit evicts those no policy wants, or fails (default 256Mi).",
		func(v string) error {
			q, err := resource.ParseQuantity(v)
			if err != nil || q.Sign() <= 0 {
				return fmt.Errorf("want a positive quantity such as 256Mi")
			}
			opts.PLM.CacheMaxSize = q.Value()
			return nil
		})
	fs.DurationVar(&opts.PLM.BackoffInitial, "plm-fetch-backoff-initial", plmfetch.DefaultMinBackoff,
		"Delay before retrying a bundle fetch that failed; it doubles with each failure (with jitter) up to --plm-fetch-backoff-max.")
	fs.DurationVar(&opts.PLM.BackoffMax, "plm-fetch-backoff-max", plmfetch.DefaultMaxBackoff,
		"Longest delay between retries of a bundle fetch that keeps failing.")
	fs.StringVar(&opts.PLM.APIGroup, "plm-api-group", "",
		"Force the PLM API group (appprotect.f5.com or waf.f5.com); empty uses whichever CRD is installed.")
	fs.BoolVar(&opts.Snippets, "snippets", false,
		"Enable SnippetsFilters and SnippetsPolicies (NGINX Gateway Fabric's flag): NGINX configuration that teams write by hand, read and held to an allow-list of directives per context (docs/snippets.md). "+
			"Off, they are not used: their statuses say so, and route rules that name a SnippetsFilter answer 500.")
	fs.BoolVar(&opts.TranslateEndpointChanges, "translate-endpoint-changes", false,
		"Translate every change of EndpointSlices as any other change. By default a change of endpoints alone keeps the Gateway's last translation with the new endpoint sets "+
			"(docs/endpoints.md, \"Endpoints apart from translation\"); this restores the whole translation for each, to measure the difference or should the shortcut misbehave.")
	fs.StringVar(&opts.Agent.ListenAddress, "agent-listen-address", "",
		"Address the nginx-agent server listens on (e.g. :8443); empty runs no agent server and provisions no data plane.")
	fs.StringVar(&opts.Agent.ServerAddress, "agent-server-address", "gatewall-agent."+namespace+".svc:8443",
		"host:port the data planes' agents connect to.")
	fs.StringVar(&opts.Agent.ServerName, "agent-server-name", "",
		"Name agents verify in Gatewall's certificate (default: the host of --agent-server-address).")
	fs.StringVar(&opts.Agent.TLSSecret, "agent-tls-secret", "gatewall-agent-tls",
		"Secret ([namespace/]name) with the agent server's certificate and CA; created when missing.")
	fs.StringVar(&opts.Agent.TLSDir, "agent-tls-dir", "",
		"Directory where --agent-tls-secret is mounted (an optional Secret volume); its files are read again when they change. "+
			"Empty reads the Secret from the API server every 30 s.")
	fs.StringVar(&opts.Agent.PodName, "pod-name", os.Getenv("POD_NAME"),
		"The manager's own pod (default from $POD_NAME): the leader labels it "+AgentServerLabel+", which the agent Service selects.")
	fs.BoolFunc("agent-pod-address-check",
		"Accept a data-plane pod's token only on connections from the pod's own address, so that a token requested for the pod is of no use elsewhere (default true). "+
			"Set it to false only if the network translates pods' addresses (SNAT) on their way to the manager, which makes every agent look foreign.",
		func(v string) error {
			check, err := strconv.ParseBool(v)
			opts.Agent.AnyPeerAddress = !check
			return err
		})
	fs.DurationVar(&opts.Agent.ReloadMonitoringPeriod, "agent-reload-monitoring-period", DefaultReloadMonitoringPeriod,
		"How long the data planes' agents watch NGINX's error log after a reload before reporting success; every push takes at least this long.")
	fs.StringVar(&opts.Agent.Images.NGINX, "nginx-image", provisioner.DefaultImages.NGINX, "Default data-plane image (NGINX with nginx-agent).")
	fs.StringVar(&opts.Agent.Images.NGINXWAF, "nginx-waf-image", "",
		"Default data-plane image of Gateways with WAF enabled: NGINX with F5's App Protect module, built from build/dataplane-waf/Dockerfile with your F5 subscription (docs/waf.md); empty: --nginx-image, which has no App Protect module.")
	fs.StringVar(&opts.Agent.Images.WAFEnforcer, "waf-enforcer-image", provisioner.DefaultImages.WAFEnforcer, "Default WAF enforcer image.")
	fs.StringVar(&opts.Agent.Images.WAFConfigMgr, "waf-config-mgr-image", provisioner.DefaultImages.WAFConfigMgr, "Default WAF config manager image.")
	fs.Func("nginx-docker-secret",
		"A Secret ([namespace/]name, of type kubernetes.io/dockerconfigjson) with credentials for the data-plane images' registry (F5's private-registry.nginx.com for App Protect); "+
			"copied into each Gateway's namespace and listed in its data-plane pods' imagePullSecrets. Repeatable.",
		func(v string) error {
			opts.Agent.PullSecrets = append(opts.Agent.PullSecrets, v)
			return nil
		})
}

// WritesTo lists the directories the manager may write in: a deployment
// must mount them writable, its root filesystem being read-only. Nothing
// else is written (no temporary files either).
func (o Options) WritesTo() []string {
	var dirs []string
	if o.PLM.CacheDir != "" { // used once --plm-storage-url is set
		dirs = append(dirs, o.PLM.CacheDir)
	}
	return dirs
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
