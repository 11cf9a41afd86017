package policy

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=upstreamsettingspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=upstreamsettingspolicies/status,verbs=get;update;patch

// upstreamSettingsKind is UpstreamSettingsPolicy: a direct policy on
// Services that configures their upstreams. Its ancestors are the Gateways
// whose attached routes proxy to a target Service (a backend or a mirror).
var upstreamSettingsKind Kind = upstreamKind{"UpstreamSettingsPolicy"}

type upstreamKind struct{ gatewallKind }

// AffectedType is empty: the targets are Services, whose status Gatewall
// does not write.
func (upstreamKind) AffectedType() string       { return "" }
func (upstreamKind) NewObject() client.Object   { return &v1alpha1.UpstreamSettingsPolicy{} }
func (upstreamKind) NewList() client.ObjectList { return &v1alpha1.UpstreamSettingsPolicyList{} }
func (upstreamKind) Targets() TargetKinds       { return ServiceTargets }
func (upstreamKind) TargetsField() string       { return "targetRefs" }
func (upstreamKind) Reads() []string            { return nil }
func (upstreamKind) Validate(p v1alpha1.Policy) error {
	_, _, err := parseUpstreamSettings(p)
	return err
}

// Evaluate gives each policy on a Service the Gateway proxies to an
// outcome there, and the Gateway's upstreams of each such Service the
// merged settings of its accepted policies. A policy says what of it does
// not apply on the Gateway (see verdict.outcome): nothing reaches the
// connections of TLSRoutes, TCPRoutes and UDPRoutes (NGINX passes them on
// through its stream module), and useClusterIP has no effect on a Service
// without a cluster IP; a policy whose Services are all backends of such
// routes only there is not accepted there, rather than silent.
func (k upstreamKind) Evaluate(g *Gateway, in *graph.Input) Attachment {
	res := newResult("")
	res.Upstreams = map[types.NamespacedName]*config.UpstreamSettings{}
	if len(in.Policies[k.Name()]) == 0 {
		return res // not worth a look at every route
	}
	used := proxiedServices(g)
	passed := passedServices(g)
	merged := map[types.NamespacedName]UpstreamSettings{}
	zones := &ledger{what: "UpstreamSettingsPolicy zones", limit: UpstreamZoneBudget}
	for _, s := range decide(in, k.Name(), parseUpstreamSettings) {
		var here []types.NamespacedName
		v := &verdict{}
		for _, t := range s.targets {
			if t.Kind != "Service" || (used[t.Key] == nil && passed[t.Key] == nil) {
				continue
			}
			v.targets++
			if routes := passed[t.Key]; routes != nil {
				v.issues = append(v.issues, passedIssue(t, routes, used[t.Key] == nil))
			}
			if used[t.Key] == nil {
				continue
			}
			here = append(here, t.Key)
			if s.settings.UseClusterIP != nil && *s.settings.UseClusterIP && used[t.Key].backend.ClusterIP == "" {
				if i := noClusterIPIssue(t, in.Services[t.Key]); i != nil {
					v.issues = append(v.issues, *i)
				}
			}
		}
		if v.targets == 0 {
			continue
		}
		key := types.NamespacedName{Namespace: s.policy.GetNamespace(), Name: s.policy.GetName()}
		o := &Outcome{Policy: key, Generation: s.policy.GetGeneration()}
		res.Outcomes[key] = o
		if s.rejected != nil {
			o.Accepted = *s.rejected
			continue
		}
		// A zone for each upstream of each of its Services here.
		var zoneBytes int64
		for _, svc := range here {
			zoneBytes += bytesOf(s.settings.ZoneSize) * int64(len(used[svc].upstreams))
		}
		if why, ok := zones.spend(policyName(s.policy), zoneBytes, g); !ok {
			o.Accepted = *overBudget(why)
			continue
		}
		o.Accepted, o.Partial = v.outcome()
		o.Partial = withIgnored(o.Partial, s.ignored)
		for _, svc := range here {
			merged[svc] = merged[svc].overlay(s.settings) // oldest first: no field is set twice
		}
	}
	for svc, set := range merged {
		res.Upstreams[svc] = set.config()
	}
	return res
}

// noClusterIPIssue says that useClusterIP has no effect on a Service whose
// cluster IP NGINX cannot use (graph.Backend.ClusterIP is empty): a
// headless one, or one whose clusterIP is not a plain unicast address. A
// Service without one yet (a manifest read offline: the API server
// allocates it) gets none.
func noClusterIPIssue(t graph.ObjectRef, svc *corev1.Service) *targetIssue {
	if svc == nil || svc.Spec.ClusterIP == "" {
		return nil
	}
	why := "it is headless (clusterIP None)"
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		why = "its clusterIP " + conditions.Quote(svc.Spec.ClusterIP) + " is not an address NGINX can connect to"
	}
	return &targetIssue{target: t, msg: fmt.Sprintf("useClusterIP is not applied to %s: %s, so NGINX sends requests to its endpoints", t, why)}
}

// passedIssue says that a policy does not reach the connections of the
// TLSRoutes, TCPRoutes or UDPRoutes (sorted) that pass to a Service;
// refused when no HTTPRoute or GRPCRoute of the Gateway proxies to it either.
func passedIssue(t graph.ObjectRef, routes []graph.ObjectRef, only bool) targetIssue {
	kind := routes[0].Kind
	names := make([]string, 0, len(routes))
	for _, r := range routes {
		names = append(names, r.Key.String())
		if r.Kind != kind {
			kind = ""
		}
	}
	list := kind + " " + names[0]
	switch {
	case kind == "":
		var kinded []string
		for _, r := range routes {
			kinded = append(kinded, r.String())
		}
		list = "routes " + strings.Join(kinded, ", ")
	case len(names) > 1:
		list = kind + "s " + strings.Join(names, ", ")
	}
	whose, backends := "a "+kind+"'s", kind+" backends"
	if kind == "" {
		whose, backends = "these routes'", "TLSRoute, TCPRoute and UDPRoute backends"
	}
	why := "NGINX passes " + whose + " connections through its stream module to the Service's endpoints in turn, with no keep-alive, load-balancing method, shared zone or cluster IP"
	if only {
		return targetIssue{target: t, refused: true, msg: fmt.Sprintf(
			"%s is a backend of %s only on this Gateway, and UpstreamSettingsPolicy does not apply to %s: %s", t, list, backends, why)}
	}
	return targetIssue{target: t, msg: fmt.Sprintf(
		"on %s, the connections of %s are not covered: %s", t, list, why)}
}

// proxied is a Service whose upstreams the Gateway's configuration has:
// one of its valid backends (they share the Service's cluster IP), and its
// upstreams (one per port, and per port spoken to with h2c).
type proxied struct {
	backend   *graph.Backend
	upstreams map[string]bool
}

// proxiedServices are the Services the backends and mirrors of the
// Gateway's attached HTTPRoutes and GRPCRoutes proxy to.
func proxiedServices(g *Gateway) map[types.NamespacedName]*proxied {
	out := map[types.NamespacedName]*proxied{}
	for _, r := range g.attached {
		eachBackend(r, func(b *graph.Backend) {
			if !b.Valid {
				return
			}
			if out[b.Service] == nil {
				out[b.Service] = &proxied{backend: b, upstreams: map[string]bool{}}
			}
			out[b.Service].upstreams[fmt.Sprintf("%d/%t", b.Port, b.Protocol == graph.ProtocolH2C)] = true
		})
	}
	return out
}

// passedServices are the Services the Gateway's attached TLSRoutes,
// TCPRoutes and UDPRoutes pass connections to, each with those routes, sorted.
func passedServices(g *Gateway) map[types.NamespacedName][]graph.ObjectRef {
	out := map[types.NamespacedName][]graph.ObjectRef{}
	for _, r := range g.Routes { // sorted by kind, namespace, name
		if !graph.PassesConnections(r.Kind) || !slices.ContainsFunc(r.Parents, (*graph.ParentRef).Attached) {
			continue
		}
		ref := graph.ObjectRef{Kind: r.Kind, Key: r.Key}
		eachBackend(r, func(b *graph.Backend) {
			if b.Valid && !slices.Contains(out[b.Service], ref) {
				out[b.Service] = append(out[b.Service], ref)
			}
		})
	}
	return out
}

// addBackendServices adds the Services a route's rules use as backends or
// mirrors (only the valid ones when validOnly).
func addBackendServices(out map[types.NamespacedName]bool, r *graph.Route, validOnly bool) {
	eachBackend(r, func(b *graph.Backend) {
		if b.Valid || !validOnly {
			out[b.Service] = true
		}
	})
}

// eachBackend calls f with every backend and mirror of a route's rules.
func eachBackend(r *graph.Route, f func(*graph.Backend)) {
	for _, rule := range r.Rules {
		for _, b := range rule.Backends {
			f(b)
		}
		for _, m := range rule.Filters.Mirrors {
			if m.Backend != nil {
				f(m.Backend)
			}
		}
	}
}

// PlusOnlyMethod is what a policy whose loadBalancingMethod needs NGINX
// Plus is told (a format for the method).
const PlusOnlyMethod = "loadBalancingMethod %s is not applied: it needs NGINX Plus, and Gatewall's data plane runs open-source NGINX, so the upstreams keep round robin"

// UpstreamSettings are the settings of UpstreamSettingsPolicies; nil is unset.
type UpstreamSettings struct {
	ZoneSize        *string
	Connections     *int32
	Requests        *int32
	Time, Timeout   *string
	Method, HashKey *string
	UseClusterIP    *bool
}

// parseUpstreamSettings re-checks a policy's CRD rules and turns it into
// NGINX values. The zone size is written in bytes, k or m: NGINX's zone
// does not take the g suffix.
func parseUpstreamSettings(o v1alpha1.Policy) (UpstreamSettings, string, error) {
	p := o.(*v1alpha1.UpstreamSettingsPolicy)
	if errs := validation.UpstreamSettingsPolicy(p); len(errs) > 0 {
		return UpstreamSettings{}, "", errs.ToAggregate()
	}
	spec := p.Spec
	var s UpstreamSettings
	if spec.ZoneSize != nil {
		n, err := validation.ParseByteSize(string(*spec.ZoneSize))
		if err != nil {
			return UpstreamSettings{}, "", err
		}
		z := human(n)
		s.ZoneSize = &z
	}
	if k := spec.KeepAlive; k != nil {
		s.Connections, s.Requests = k.Connections, k.Requests
		s.Time, s.Timeout = (*string)(k.Time), (*string)(k.Timeout)
	}
	ignored := ""
	if m := spec.LoadBalancingMethod; m != nil {
		if strings.Contains(string(*m), "least_time") {
			ignored = fmt.Sprintf(PlusOnlyMethod, *m)
		} else {
			s.Method = (*string)(m)
		}
	}
	s.HashKey = (*string)(spec.HashMethodKey)
	s.UseClusterIP = spec.UseClusterIP
	return s, ignored, nil
}

func (s UpstreamSettings) fields() []string {
	return setFields([]fieldSet{
		{"zoneSize", s.ZoneSize != nil},
		{"keepAlive.connections", s.Connections != nil},
		{"keepAlive.requests", s.Requests != nil},
		{"keepAlive.time", s.Time != nil},
		{"keepAlive.timeout", s.Timeout != nil},
		{"loadBalancingMethod", s.Method != nil},
		{"hashMethodKey", s.HashKey != nil},
		{"useClusterIP", s.UseClusterIP != nil},
	})
}

func (s UpstreamSettings) overlay(o UpstreamSettings) UpstreamSettings {
	s.ZoneSize, s.Time, s.Timeout = pick(s.ZoneSize, o.ZoneSize), pick(s.Time, o.Time), pick(s.Timeout, o.Timeout)
	s.Method, s.HashKey = pick(s.Method, o.Method), pick(s.HashKey, o.HashKey)
	s.Connections, s.Requests = pick(s.Connections, o.Connections), pick(s.Requests, o.Requests)
	s.UseClusterIP = pick(s.UseClusterIP, o.UseClusterIP)
	return s
}

// config is the settings as the configuration writer renders them.
func (s UpstreamSettings) config() *config.UpstreamSettings {
	c := &config.UpstreamSettings{Keepalive: s.Connections, KeepaliveRequests: s.Requests}
	deref := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	c.ZoneSize, c.KeepaliveTime, c.KeepaliveTimeout = deref(s.ZoneSize), deref(s.Time), deref(s.Timeout)
	c.UseClusterIP = s.UseClusterIP
	switch m := deref(s.Method); m {
	case "", "round_robin":
	case "hash", "hash consistent":
		// The CRD's rules give a hash method its key in the same policy.
		if s.HashKey != nil {
			c.Method = append([]string{"hash", *s.HashKey}, strings.Fields(m)[1:]...)
		}
	default:
		c.Method = strings.Fields(m)
	}
	return c
}
