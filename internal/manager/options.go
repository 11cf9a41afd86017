// Package manager assembles Gatewall's controller-runtime manager from its
// options: the scheme, health and readiness probes, metrics, leader election
// and the reconcilers. cmd/ parses flags into Options; tests build Options
// directly and run the same manager.
package manager

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwvalidation "sigs.k8s.io/gateway-api/apis/v1/util/validation"

	"github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/controller"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
)

// Defaults of the manager's options.
const (
	DefaultControllerName   = graph.DefaultControllerName
	DefaultGatewayClassName = "nginx"
	DefaultNamespace        = "gatewall-system"
)

// Options configure the manager.
type Options struct {
	// ControllerName is the GatewayClass controllerName Gatewall serves.
	ControllerName string
	// GatewayClassName is the GatewayClass Gatewall expects to serve.
	GatewayClassName string
	// Namespace is the namespace Gatewall runs in; Secret names without a
	// namespace are looked up there.
	Namespace string

	// MetricsAddr serves Prometheus metrics ("0" turns them off).
	MetricsAddr string
	// MetricsInsecure serves them over plain HTTP to anyone; by default
	// they are served over HTTPS to clients whose token the API server
	// authenticates and authorizes to get /metrics.
	MetricsInsecure bool
	// MetricsCertDir holds the metrics server's tls.crt and tls.key,
	// reloaded when they change; "" (or files not there) makes a
	// self-signed certificate at start.
	MetricsCertDir string
	// ProbeAddr serves /healthz and /readyz.
	ProbeAddr string
	// PprofAddr serves Go's profiles (/debug/pprof/); "" or "0" turns them
	// off.
	PprofAddr string
	// LeaderElection makes only one replica reconcile at a time.
	LeaderElection bool
	// LeaderElectionID names the leader election Lease; "" uses
	// LeaderElectionID(ControllerName).
	LeaderElectionID string

	// PLM configures access to PLM's bundle storage.
	PLM PLMOptions

	// DataPlane receives the Gateways' configurations; nil holds them
	// without a data plane (every Gateway stays not Programmed).
	DataPlane dataplane.DataPlane
	// Notifier wakes the reconcilers when the data plane reports; the
	// DataPlane calls it. nil makes one.
	Notifier *controller.Notifier

	// Agent configures the nginx-agent server and provisioning; it is used
	// when DataPlane is nil and Agent.ListenAddress is set.
	Agent AgentOptions

	// WAFModule is the App Protect module path written in nginx.conf; ""
	// uses the data-plane image's.
	WAFModule string

	// Snippets enables SnippetsFilters and SnippetsPolicies (--snippets):
	// the NGINX configuration teams write by hand, held to an allow-list
	// (docs/snippets.md). Off, their statuses say they are not used, and
	// the rules that name a SnippetsFilter answer 500.
	Snippets bool

	// TranslateEndpointChanges translates every change of EndpointSlices
	// (--translate-endpoint-changes) instead of refreshing the last
	// translation's endpoint sets when only they change.
	TranslateEndpointChanges bool

	// APIDiscoveryInterval is how often the manager looks for the CRDs of
	// optional APIs it does not use yet (0: DefaultAPIDiscoveryInterval).
	APIDiscoveryInterval time.Duration
	// FieldDiscoveryInterval is how often the manager looks at the
	// Gateway API CRDs' schemas for the optional fields features need
	// (0: DefaultFieldDiscoveryInterval).
	FieldDiscoveryInterval time.Duration
}

// PLMOptions configure the fetching of WAF bundles from PLM storage.
type PLMOptions struct {
	// StorageURL is the S3-compatible endpoint, http:// or https://.
	StorageURL string
	// Bucket and Prefix are where bundles may be fetched from: a PLM
	// status naming another location is refused. Bucket is required with
	// StorageURL (the storage credentials reach more than PLM's bundles).
	Bucket, Prefix string
	// CredentialsSecret holds seaweedfs_admin_secret (access key id "admin").
	CredentialsSecret string
	// CASecret holds ca.crt to verify the storage server.
	CASecret string
	// ClientSSLSecret holds tls.crt and tls.key for mutual TLS.
	ClientSSLSecret string
	// SkipVerify turns off verification of the server's certificate.
	SkipVerify bool
	// APIGroup forces the PLM API: "appprotect.f5.com", "waf.f5.com", or "" to
	// use whichever CRD is installed.
	APIGroup string
	// CacheDir holds fetched bundles, verified and named by sha256, so a
	// restart needs no network to keep what was in force.
	CacheDir string
	// CacheMaxSize bounds CacheDir's size in bytes, and so the bundles the
	// manager holds in memory (0: plm.DefaultMaxCacheSize).
	CacheMaxSize int64
	// BackoffInitial and BackoffMax bound the delay between failed fetches
	// of a bundle, which doubles from the one to the other (0: the
	// fetcher's defaults, 1s and 2m).
	BackoffInitial, BackoffMax time.Duration
}

// Scope is where bundles may be fetched from.
func (o PLMOptions) Scope() plm.Scope { return plm.Scope{Bucket: o.Bucket, Prefix: o.Prefix} }

// PLM API groups Gatewall understands.
const (
	PLMGroupAppProtect = plm.GroupAppProtect
	PLMGroupWAF        = plm.GroupWAF
)

// Validate checks the options and returns every problem at once.
func (o Options) Validate() error {
	var errs []error
	if !gwvalidation.IsControllerNameValid(gatewayv1.GatewayController(o.ControllerName)) {
		errs = append(errs, fmt.Errorf("--gateway-ctlr-name %q: must be a domain-prefixed path, such as example.com/gateway-controller", o.ControllerName))
	}
	if msgs := k8svalidation.IsDNS1123Subdomain(o.GatewayClassName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--gatewayclass %q: %s", o.GatewayClassName, strings.Join(msgs, "; ")))
	}
	if msgs := k8svalidation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	if o.PLM.StorageURL != "" && o.PLM.CacheDir == "" {
		errs = append(errs, fmt.Errorf("--plm-cache-dir is required with --plm-storage-url"))
	}
	if o.PLM.StorageURL != "" {
		u, err := url.Parse(o.PLM.StorageURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--plm-storage-url %q: must be an http:// or https:// URL", o.PLM.StorageURL))
		}
	}
	for _, name := range o.Agent.PullSecrets {
		if _, err := SecretName(name, o.Namespace); err != nil {
			errs = append(errs, fmt.Errorf("--nginx-docker-secret: %w", err))
		}
	}
	for flag, name := range map[string]string{
		"--plm-storage-credentials-secret": o.PLM.CredentialsSecret,
		"--plm-storage-ca-secret":          o.PLM.CASecret,
		"--plm-storage-client-ssl-secret":  o.PLM.ClientSSLSecret,
	} {
		if name == "" {
			continue
		}
		if _, err := SecretName(name, o.Namespace); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	if o.PLM.StorageURL != "" && o.PLM.Bucket == "" {
		errs = append(errs, fmt.Errorf("--plm-storage-bucket is required with --plm-storage-url: the bucket PLM stores its bundles in (with --plm-storage-prefix, the folder), outside which nothing is fetched"))
	}
	if err := o.PLM.Scope().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--plm-storage-bucket %q, --plm-storage-prefix %q: %w", o.PLM.Bucket, o.PLM.Prefix, err))
	}
	if o.PLM.BackoffInitial < 0 || o.PLM.BackoffMax < 0 || o.PLM.BackoffMax > 0 && o.PLM.BackoffMax < o.PLM.BackoffInitial {
		errs = append(errs, fmt.Errorf("--plm-fetch-backoff-initial %v, --plm-fetch-backoff-max %v: want 0 < initial <= max", o.PLM.BackoffInitial, o.PLM.BackoffMax))
	}
	if o.PLM.CacheMaxSize < 0 {
		errs = append(errs, fmt.Errorf("--plm-cache-max-size %d: must be positive", o.PLM.CacheMaxSize))
	}
	switch o.PLM.APIGroup {
	case "", PLMGroupAppProtect, PLMGroupWAF:
	default:
		errs = append(errs, fmt.Errorf("--plm-api-group %q: must be %s, %s or empty", o.PLM.APIGroup, PLMGroupAppProtect, PLMGroupWAF))
	}
	return errors.Join(errs...)
}

// SecretName parses a Secret name given as "name" or "namespace/name"; a bare
// name is in defaultNamespace.
func SecretName(s, defaultNamespace string) (types.NamespacedName, error) {
	ns, name, found := strings.Cut(s, "/")
	if !found {
		ns, name = defaultNamespace, s
	}
	if msgs := k8svalidation.IsDNS1123Label(ns); len(msgs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("namespace of %q: %s", s, strings.Join(msgs, "; "))
	}
	if msgs := k8svalidation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("name of %q: %s", s, strings.Join(msgs, "; "))
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// LeaderElectionID is the default leader election Lease of the installation
// serving controllerName: installations of other controllers in the same
// namespace elect their own leaders.
func LeaderElectionID(controllerName string) string {
	sum := sha256.Sum256([]byte(controllerName))
	return "gatewall-leader-" + hex.EncodeToString(sum[:])[:10]
}
