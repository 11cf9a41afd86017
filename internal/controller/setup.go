package controller

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	apiplm "github.com/gatewall/gatewall/api/plm"
	"github.com/gatewall/gatewall/internal/apis"
	"github.com/gatewall/gatewall/internal/coalesce"
	"github.com/gatewall/gatewall/internal/dataplane"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/policy"
	"github.com/gatewall/gatewall/internal/snapshot"
	"github.com/gatewall/gatewall/internal/statuswrite"
	"github.com/gatewall/gatewall/internal/wafbundles"
)

// Config is what the reconcilers need to know about this Gatewall instance.
type Config struct {
	// ControllerName is the GatewayClass controllerName Gatewall serves.
	ControllerName string
	// GatewayClassName is the GatewayClass Gatewall expects to serve.
	GatewayClassName string
	// Namespace is the namespace Gatewall runs in.
	Namespace string
	// APIs says which optional APIs (PLM, TLSRoute, ListenerSet,
	// BackendTLSPolicy) the cluster serves, and sets up what uses one when
	// its CRD is installed later; nil serves none.
	APIs *apis.Registry
	// PLMScope is where WAF bundles may be fetched from.
	PLMScope apiplm.Scope
	// Bundles brings fetched WAF bundles into snapshots.
	Bundles *wafbundles.Bundles
	// Notifier wakes reconcilers when bundles or data planes change.
	Notifier *Notifier
	// WAFModule is the App Protect module path for nginx.conf ("" for the
	// data-plane image's).
	WAFModule string
	// Translations are the Gateways' last translations, which the Gateway
	// reconciler makes and reuses for the same input (Setup makes them
	// when nil).
	Translations *Translations
	// Referenced reads the Secrets and ConfigMaps Gateways, ListenerSets
	// and policies reference (Setup makes it when nil, on the manager's
	// cache and API reader).
	Referenced *snapshot.Referenced
	// Snippets says the installation enables snippets (the manager's
	// --snippets): SnippetsFilters and SnippetsPolicies are used;
	// otherwise their statuses say they are not.
	Snippets bool
	// TranslateEndpointChanges translates every change of EndpointSlices;
	// false keeps a Gateway's last translation with new endpoint sets when
	// only they change (translate.RefreshEndpoints).
	TranslateEndpointChanges bool
}

// reader reads snapshots with c as this configuration says.
func (c Config) reader(cl client.Reader) snapshot.Reader {
	return snapshot.Reader{Client: cl, ControllerName: c.ControllerName, Referenced: c.Referenced, Bundles: c.Bundles,
		RouteKinds: c.routeKinds, PolicyKinds: c.policyKinds, ListenerSets: func() bool { return c.served(apis.ListenerSet) },
		PLMGroup: c.plmGroup, PLMScope: c.PLMScope, WAFModule: c.WAFModule, Snippets: c.Snippets}
}

// plmGroup is the API group of the PLM objects in use, "" while no PLM CRD
// is installed.
func (c Config) plmGroup() string { return c.APIs.PLMGroup() }

// served says whether the cluster serves an optional API now.
func (c Config) served(api apis.API) bool { return c.APIs.Served(api) }

// policyKinds are the kinds of policy.Kinds whose CRD is installed now:
// Gatewall's own always are (config/crd); BackendTLSPolicy is the Gateway
// API's, which may not be yet.
func (c Config) policyKinds() []policy.Kind {
	return slices.DeleteFunc(slices.Clone(policy.Kinds), func(k policy.Kind) bool {
		return optionalKind(k) != "" && !c.served(optionalKind(k))
	})
}

// optionalKind is the optional API a policy kind belongs to, "" for
// Gatewall's own kinds.
func optionalKind(k policy.Kind) apis.API {
	if _, gatewayAPI := k.NewObject().(*gatewayv1.BackendTLSPolicy); gatewayAPI {
		return apis.BackendTLSPolicy
	}
	return ""
}

// policyWorkers write policies' statuses in parallel.
const policyWorkers = 2

// Setup registers every reconciler with the manager. dp receives each
// Gateway's configuration and reports what its data plane applied.
func Setup(mgr ctrl.Manager, cfg Config, dp dataplane.DataPlane, prov *Provisioning) error {
	if cfg.Translations == nil {
		cfg.Translations = NewTranslations()
	}
	if cfg.Referenced == nil {
		cfg.Referenced = snapshot.NewReferenced(mgr.GetCache(), mgr.GetAPIReader())
	}
	statuses := statuswrite.NewRouteWriter(mgr.GetClient(), mgr.GetLogger().WithName("route-status"))
	if err := mgr.Add(statuses); err != nil {
		return fmt.Errorf("adding the route status writer: %w", err)
	}
	// Policies' statuses have jobs of their own: a WAF policy's records of
	// the bundles in force, which the next translation reads, must not
	// wait behind thousands of route status writes.
	policyJobs := coalesce.NewJobs[graph.ObjectRef]("policy-status", mgr.GetLogger().WithName("policy-status"), policyWorkers)
	if err := mgr.Add(policyJobs); err != nil {
		return fmt.Errorf("adding the policy status writer: %w", err)
	}
	policies := statuswrite.NewPolicyWriter(policyJobs, mgr.GetClient(), cfg.ControllerName, mgr.GetEventRecorder("gatewall-policy"))
	gatewayStatuses := coalesce.NewJobs[types.NamespacedName]("gateway-status", mgr.GetLogger().WithName("gateway-status"), gatewayWorkers).
		Paced(gatewayStatusPace, gatewayStatusMaxPause)
	if err := mgr.Add(gatewayStatuses); err != nil {
		return fmt.Errorf("adding the Gateway status writer: %w", err)
	}
	reconcilers := []interface {
		SetupWithManager(ctrl.Manager) error
	}{
		&GatewayReconciler{Client: mgr.GetClient(), Config: cfg, DataPlane: dp, Provisioning: prov, RouteStatuses: statuses, PolicyStatuses: policies,
			Recorder: mgr.GetEventRecorder("gatewall-gateway"), statuses: gatewayStatuses},
		&GatewayClassReconciler{Client: mgr.GetClient(), Config: cfg},
		&NginxProxyReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("gatewall-nginxproxy")},
	}
	if cfg.Bundles != nil {
		reconcilers = append(reconcilers, &BundleWarmer{Client: mgr.GetClient(), Config: cfg})
	}
	for _, k := range graph.ExtensionFilterKinds {
		reconcilers = append(reconcilers, &FilterReconciler{Client: mgr.GetClient(), Config: cfg, Kind: k})
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up %T: %w", r, err)
		}
	}
	// The reconcilers of optional APIs start when their CRD is installed,
	// at start or later.
	for _, k := range policy.Kinds {
		r := &PolicyReconciler{Client: mgr.GetClient(), Kind: k, Config: cfg, Statuses: policies}
		var err error
		if api := optionalKind(k); api != "" {
			err = cfg.APIs.When(api, func() error { return r.SetupWithManager(mgr) })
		} else {
			err = r.SetupWithManager(mgr)
		}
		if err != nil {
			return fmt.Errorf("setting up the %s reconciler: %w", k.Name(), err)
		}
	}
	ls := &ListenerSetReconciler{Client: mgr.GetClient(), Config: cfg, RouteStatuses: statuses}
	if err := cfg.APIs.When(apis.ListenerSet, func() error { return ls.SetupWithManager(mgr) }); err != nil {
		return fmt.Errorf("setting up the ListenerSet reconciler: %w", err)
	}
	return nil
}
