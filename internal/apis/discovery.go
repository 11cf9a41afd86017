package apis

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/plm"
)

// DefaultAPIDiscoveryInterval is how often the manager looks for the CRDs of
// optional APIs it does not use yet: one installed after the manager
// started is used within this time, without a restart.
const DefaultAPIDiscoveryInterval = 10 * time.Second

// missingAPI says, for the log, what an optional API's absence leaves out.
var missingAPI = map[API]string{
	PLM:              "no PLM APPolicy/APLogConf CRD installed: WAF policies cannot resolve their references",
	ListenerSet:      "ListenerSet CRD not installed: Gateways take listeners only from their own spec; install the Gateway API's standard CRDs",
	BackendTLSPolicy: "BackendTLSPolicy CRD not installed: backends are spoken to without TLS; install the Gateway API's standard CRDs",
}

// Missing says what an optional API's absence leaves out.
func Missing(api API) string {
	if k := RouteKindOf(api); k != nil {
		return fmt.Sprintf("%s CRD (v1) not installed: %s; install the Gateway API's standard CRDs (%s or later)", k.Name, k.Missing, k.Since)
	}
	return missingAPI[api]
}

// Discovery is how the manager looks for the optional APIs: PLMGroup forces
// PLM's API group ("" finds it), and the intervals say how often it looks
// for the APIs and the Gateway API's optional fields it does not use yet
// (0: the defaults).
type Discovery struct {
	PLMGroup                    string
	APIInterval, FieldsInterval time.Duration
	// Changed is called when an API becomes served.
	Changed func()
}

// Setup finds the optional APIs the cluster serves now, and adds runnables
// (on every replica) that keep looking for the others and for the Gateway
// API's optional fields.
func Setup(mgr ctrl.Manager, o Discovery) (*Registry, error) {
	log := ctrl.Log.WithName("apis")
	apis := New(log, o.Changed)
	d := &apiDiscovery{served: crdServed(mgr, o.PLMGroup), apis: apis, every: o.APIInterval, log: log, plmForced: o.PLMGroup != ""}
	if d.every == 0 {
		d.every = DefaultAPIDiscoveryInterval
	}
	if err := d.discover(false); err != nil {
		return nil, err
	}
	for _, api := range Optional {
		if !apis.Served(api) {
			log.Info(Missing(api)+"; Gatewall uses it as soon as it is installed, without a restart", "api", api)
		}
	}
	if err := mgr.Add(d); err != nil {
		return nil, err
	}
	fields, err := newFieldDiscovery(mgr.GetConfig(), apis, o.FieldsInterval, ctrl.Log.WithName("fields"))
	if err != nil {
		return nil, err
	}
	if err := fields.discover(); err != nil {
		// The features needing optional fields are not claimed until a
		// later look finds them.
		log.Error(err, "Looking for the Gateway API's optional fields")
	}
	if err := mgr.Add(fields); err != nil {
		return nil, err
	}
	return apis, nil
}

// crdServed says whether the API server serves an optional API now, and in
// which group for PLM (forcedPLM, or the first installed of
// appprotect.f5.com and waf.f5.com).
func crdServed(mgr ctrl.Manager, forcedPLM string) func(API) (string, bool) {
	return func(api API) (string, bool) {
		switch api {
		case PLM:
			g := detectPLMGroup(mgr, forcedPLM)
			return g, g != "" && crdInstalled(mgr, g, "APPolicy")
		}
		if RouteKindOf(api) != nil {
			// Served in v1: Gatewall reads the v1 objects (older installs
			// served the optional route kinds in v1alpha2 only).
			return "", crdInstalled(mgr, gatewayv1.GroupName, string(api), gatewayv1.GroupVersion.Version)
		}
		return "", crdInstalled(mgr, gatewayv1.GroupName, string(api))
	}
}

// apiDiscovery looks for the CRDs of the optional APIs not served yet, every
// interval, until all are; it runs on every replica (what it enables, the
// bundle warmer among them, does too).
type apiDiscovery struct {
	served func(API) (group string, ok bool)
	apis   *Registry
	every  time.Duration
	log    logr.Logger
	// plmForced: --plm-api-group names PLM's group. Else a late look that
	// finds waf.f5.com's APPolicy served, and not appprotect.f5.com's (the
	// group PLM ships, preferred), takes it only when the next look still
	// does (plmSecondGroupSeen): CRDs of both installed together become
	// served one after the other, and the group, once taken, stays.
	plmForced          bool
	plmSecondGroupSeen bool
}

// discover serves the optional APIs the cluster serves now; late is every
// look after the first, made while the manager runs.
func (d *apiDiscovery) discover(late bool) error {
	for _, api := range Optional {
		if d.apis.Served(api) {
			continue
		}
		group, ok := d.served(api)
		if ok && late && api == PLM && group == plm.GroupWAF && !d.plmForced && !d.plmSecondGroupSeen {
			d.plmSecondGroupSeen = true
			continue
		}
		if ok {
			if err := d.apis.Serve(api, group); err != nil {
				return err
			}
		}
	}
	return nil
}

// Start looks until every optional API is served or ctx ends. A failure to
// set up for an API is logged; the API stays served (its watches that
// started keep running).
func (d *apiDiscovery) Start(ctx context.Context) error {
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		all := true
		for _, api := range Optional {
			all = all && d.apis.Served(api)
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := d.discover(true); err != nil {
			d.log.Error(err, "Setting up for a newly installed API")
		}
	}
}

// NeedLeaderElection is false: followers use the optional APIs too.
func (*apiDiscovery) NeedLeaderElection() bool { return false }
