package manager

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/controller"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/scheme"
	"github.com/gatewall/gatewall/internal/unreadable"
)

// metricsOptions serves the metrics over HTTPS (a self-signed certificate,
// or --metrics-cert-dir's, watched for changes)
// to clients whose bearer token the API server authenticates (TokenReview)
// and authorizes to get the non-resource URL /metrics (SubjectAccessReview):
// the Kubebuilder convention. --metrics-secure=false serves plain HTTP.
func metricsOptions(opts Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if !opts.MetricsInsecure {
		o.SecureServing = true
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		o.CertDir = opts.MetricsCertDir
	}
	return o
}

// New builds the manager with every reconciler registered. It validates the
// options first and returns all their problems at once.
func New(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("invalid options:\n%w", err)
	}
	// Objects of Gatewall's CRDs that do not decode are read as marked
	// stubs (unreadable.StubConfig), so that one cannot stop a whole informer.
	s := scheme.New()
	cacheOpts, err := cacheOptions(s)
	if err != nil {
		return nil, fmt.Errorf("cache options: %w", err)
	}
	mgr, err := ctrl.NewManager(unreadable.StubConfig(cfg, s), ctrl.Options{
		Scheme:                  s,
		Metrics:                 metricsOptions(opts),
		HealthProbeBindAddress:  opts.ProbeAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        cmp.Or(opts.LeaderElectionID, LeaderElectionID(opts.ControllerName)),
		LeaderElectionNamespace: opts.Namespace,
		// Release the lease on shutdown so a new replica takes over at once.
		LeaderElectionReleaseOnCancel: true,
		// A manager may be started again in the same process (the local
		// runtime restarts it; tests do): its controllers keep their names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      cacheOpts,
		NewCache:   newCache,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	// Ready once the informer caches have synced: before that, reconcilers
	// would act on a partial view of the cluster. Ready stays true after:
	// a replica that becomes the leader starts its controllers' informers
	// then, and a probe waiting for them would take the new leader, the one
	// pod that serves the agents, out of the agent Service for a probe period.
	var once atomic.Bool
	synced := func(req *http.Request) error {
		if once.Load() {
			return nil
		}
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("informer caches not synced")
		}
		once.Store(true)
		return nil
	}
	if err := mgr.AddReadyzCheck("readyz", synced); err != nil {
		return nil, fmt.Errorf("adding readiness check: %w", err)
	}
	notifier := opts.Notifier
	if notifier == nil {
		notifier = &controller.Notifier{}
	}
	dp := opts.DataPlane
	var prov *controller.Provisioning
	switch {
	case dp != nil:
	case opts.Agent.ListenAddress != "":
		if dp, prov, err = setupAgent(mgr, cfg, opts, notifier); err != nil {
			return nil, fmt.Errorf("setting up the agent server: %w", err)
		}
	default:
		dp = dataplane.NewHeldFiles()
	}
	bundles, err := setupPLM(mgr, opts, notifier)
	if err != nil {
		return nil, fmt.Errorf("setting up PLM bundle fetching: %w", err)
	}
	served, err := apis.Setup(mgr, apis.Discovery{PLMGroup: opts.PLM.APIGroup, APIInterval: opts.APIDiscoveryInterval,
		FieldsInterval: opts.FieldDiscoveryInterval, Changed: notifier.Notify})
	if err != nil {
		return nil, err
	}
	ctrl.Log.WithName("setup").Info("PLM API", "group", served.PLMGroup(), "storage", opts.PLM.StorageURL)
	ctrl.Log.WithName("setup").Info("snippets", "enabled", opts.Snippets)
	err = controller.Setup(mgr, controller.Config{
		ControllerName:   opts.ControllerName,
		GatewayClassName: opts.GatewayClassName,
		Namespace:        opts.Namespace,
		APIs:             served,
		PLMScope:         opts.PLM.Scope(),
		Bundles:          bundles,
		Notifier:         notifier,
		WAFModule:        opts.WAFModule,
		Snippets:         opts.Snippets,

		TranslateEndpointChanges: opts.TranslateEndpointChanges,
	}, dp, prov)
	if err != nil {
		return nil, err
	}
	return mgr, nil
}
