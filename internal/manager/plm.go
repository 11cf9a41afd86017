package manager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gatewall/gatewall/internal/controller"
	"github.com/gatewall/gatewall/internal/metrics"
	plmfetch "github.com/gatewall/gatewall/internal/plm"
	"github.com/gatewall/gatewall/internal/wafbundles"
)

// everyReplica is a runnable that runs on every replica, leader or not.
type everyReplica func(context.Context) error

func (r everyReplica) Start(ctx context.Context) error { return r(ctx) }

// NeedLeaderElection is false: the runnable runs on followers too.
func (everyReplica) NeedLeaderElection() bool { return false }

// fetcherOptions are the fetcher's options from the manager's: fetched
// bundles wake the reconcilers.
func fetcherOptions(o PLMOptions, notifier *controller.Notifier) plmfetch.Options {
	return plmfetch.Options{
		Endpoint:     o.StorageURL,
		CacheDir:     o.CacheDir,
		Scope:        o.Scope(),
		MaxCacheSize: o.CacheMaxSize,
		MinBackoff:   o.BackoffInitial,
		MaxBackoff:   o.BackoffMax,
		OnChange:     func(string) { notifier.Notify() },
		Log:          ctrl.Log.WithName("plm"),
	}
}

// setupPLM builds what fetches WAF bundles: the fetcher (or NoStorage
// without --plm-storage-url) run by the manager, and the reconciler that
// hands it the storage Secrets. Fetched bundles wake the reconcilers.
func setupPLM(mgr ctrl.Manager, opts Options, notifier *controller.Notifier) (*wafbundles.Bundles, error) {
	if opts.PLM.StorageURL == "" {
		return wafbundles.NewBundles(wafbundles.NoStorage{}), nil
	}
	f, err := plmfetch.New(fetcherOptions(opts.PLM, notifier))
	if err != nil {
		return nil, err
	}
	// Every replica fetches (BundleWarmer), so a new leader starts warm.
	if err := mgr.Add(everyReplica(f.Run)); err != nil {
		return nil, err
	}
	metrics.SetBundlesSource(f.Counts)
	cfg := controller.PLMStorageConfig{SkipVerify: opts.PLM.SkipVerify}
	for _, s := range []struct {
		name string
		into **types.NamespacedName
	}{{opts.PLM.CredentialsSecret, &cfg.Credentials}, {opts.PLM.CASecret, &cfg.CA}, {opts.PLM.ClientSSLSecret, &cfg.ClientSSL}} {
		if s.name == "" {
			continue
		}
		k, err := SecretName(s.name, opts.Namespace)
		if err != nil {
			return nil, err
		}
		*s.into = &k
	}
	if cfg.CA == nil && cfg.ClientSSL == nil {
		if err := f.SetTLS(plmfetch.TLSSettings{SkipVerify: opts.PLM.SkipVerify}); err != nil {
			return nil, fmt.Errorf("PLM storage TLS: %w", err)
		}
	}
	if cfg.Credentials != nil || cfg.CA != nil || cfg.ClientSSL != nil {
		r := &controller.PLMStorageReconciler{APIReader: mgr.GetAPIReader(), Config: cfg, Storage: f}
		if err := r.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	return wafbundles.NewBundles(f), nil
}
