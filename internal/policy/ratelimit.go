package policy

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=ratelimitpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=ratelimitpolicies/status,verbs=get;update;patch

// rateLimitKind is RateLimitPolicy: NGINX's local request rate limits
// (limit_req). The Gateway's settings are rendered in the locations of its
// routes, not at http level, so that NGINX's own servers (the status
// endpoint the agent scrapes) are never limited; the zones are declared at
// http level.
var rateLimitKind Kind = &inherited[RateLimits]{
	gatewallKind: "RateLimitPolicy",
	affected:     v1alpha1.RateLimitPolicyAffected,
	include:      "rate-limit",
	targetsField: "targetRefs",
	noun:         "rate limits",
	newObject:    func() v1alpha1.PolicyWithStatus { return &v1alpha1.RateLimitPolicy{} },
	newList:      func() client.ObjectList { return &v1alpha1.RateLimitPolicyList{} },
	parse:        parseRateLimits,
	gateway:      func(RateLimits) ([]config.Directive, error) { return nil, nil },
	everyRoute:   true,
	route: func(rt routeTarget[RateLimits]) ([]config.Directive, *targetIssue) {
		return rt.gw.overlay(rt.local).directives(), nil
	},
	pinned: func(_ RateLimits, rendered []RateLimits, _ *Result) []config.Directive { return zones(rendered) },
	admit:  admitRateLimits,
}

// admitRateLimits spends the Gateway's RateLimitZoneBudget on the zones
// of its policies' rules, oldest policy first; a policy whose zones do not
// fit is refused there, whole.
func admitRateLimits(g *Gateway, here []*state[RateLimits]) map[*state[RateLimits]]string {
	out := map[*state[RateLimits]]string{}
	budget := &ledger{what: "RateLimitPolicy zones", limit: RateLimitZoneBudget}
	for _, s := range here {
		var n int64
		if s.settings.Rules != nil {
			for _, r := range *s.settings.Rules {
				n += r.bytes
			}
		}
		if why, ok := budget.spend(policyName(s.policy), n, g); !ok {
			out[s] = why
		}
	}
	return out
}

// DefaultRateLimitZoneSize is a rule's zone size when it sets none.
const (
	DefaultRateLimitZoneSize        = "10m"
	defaultRateLimitZoneBytes int64 = 10 << 20
)

// RateLimits are the settings of RateLimitPolicies; nil fields are unset.
// A policy's local rules are one field: a route policy with local set
// replaces the Gateway's rules (local: {} or rules: [] turns them off on
// that route; an empty list cannot survive a client that omits empty
// fields, so an empty local counts the same).
type RateLimits struct {
	Rules      *[]rateRule
	DryRun     *bool
	LogLevel   *string
	RejectCode *int32
}

// rateRule is one rule as NGINX gets it: its zone (one per policy and
// rule, shared by every target of the policy) and its limit_req arguments.
type rateRule struct {
	zone, key, rate, size string
	bytes                 int64 // the zone's size
	burst, delay          int32
	noDelay               bool
}

func parseRateLimits(o v1alpha1.Policy) (RateLimits, string, error) {
	p := o.(*v1alpha1.RateLimitPolicy)
	if errs := validation.RateLimitPolicy(p); len(errs) > 0 {
		return RateLimits{}, "", errs.ToAggregate()
	}
	var s RateLimits
	rl := p.Spec.RateLimit
	if rl == nil {
		return s, "", nil
	}
	s.DryRun, s.RejectCode = rl.DryRun, rl.RejectCode
	if rl.LogLevel != nil {
		l := string(*rl.LogLevel)
		s.LogLevel = &l
	}
	if rl.Local != nil { // local: {} (or rules: []) sets no rules: none of the Gateway's apply
		rules := make([]rateRule, 0, len(rl.Local.Rules))
		for i, r := range rl.Local.Rules {
			rr := rateRule{zone: config.RateLimitZone(client.ObjectKeyFromObject(p), i), key: r.Key, rate: string(r.Rate),
				size: DefaultRateLimitZoneSize, bytes: defaultRateLimitZoneBytes}
			if r.ZoneSize != nil {
				n, err := validation.ParseByteSize(string(*r.ZoneSize))
				if err != nil {
					return RateLimits{}, "", fmt.Errorf("spec.rateLimit.local.rules[%d].zoneSize: %w", i, err)
				}
				rr.size, rr.bytes = human(n), n
			}
			if r.Burst != nil {
				rr.burst = *r.Burst
			}
			if r.Delay != nil {
				rr.delay = *r.Delay
			}
			rr.noDelay = r.NoDelay != nil && *r.NoDelay
			rules = append(rules, rr)
		}
		s.Rules = &rules
	}
	return s, "", nil
}

func (s RateLimits) fields() []string {
	return setFields([]fieldSet{
		{"rateLimit.local.rules", s.Rules != nil},
		{"rateLimit.dryRun", s.DryRun != nil},
		{"rateLimit.logLevel", s.LogLevel != nil},
		{"rateLimit.rejectCode", s.RejectCode != nil},
	})
}

func (s RateLimits) overlay(o RateLimits) RateLimits {
	s.Rules, s.DryRun = pick(s.Rules, o.Rules), pick(s.DryRun, o.DryRun)
	s.LogLevel, s.RejectCode = pick(s.LogLevel, o.LogLevel), pick(s.RejectCode, o.RejectCode)
	return s
}

// directives renders effective settings for a location: nothing without
// rules. Burst and delay 0 are NGINX's defaults, which it refuses written out.
func (s RateLimits) directives() []config.Directive {
	if s.Rules == nil || len(*s.Rules) == 0 {
		return nil
	}
	var out []config.Directive
	for _, r := range *s.Rules {
		args := []string{"zone=" + r.zone}
		if r.burst > 0 {
			args = append(args, fmt.Sprintf("burst=%d", r.burst))
		}
		switch {
		case r.noDelay:
			args = append(args, "nodelay")
		case r.delay > 0:
			args = append(args, fmt.Sprintf("delay=%d", r.delay))
		}
		out = append(out, config.D("limit_req", args...))
	}
	if s.DryRun != nil {
		out = append(out, config.D("limit_req_dry_run", onOff(*s.DryRun)))
	}
	if s.LogLevel != nil {
		out = append(out, config.D("limit_req_log_level", *s.LogLevel))
	}
	if s.RejectCode != nil {
		out = append(out, config.D("limit_req_status", strconv.Itoa(int(*s.RejectCode))))
	}
	return out
}

// zones declares, once each and sorted, the zones of the rules rendered.
func zones(rendered []RateLimits) []config.Directive {
	seen := map[string]config.Directive{}
	for _, s := range rendered {
		if s.Rules == nil {
			continue
		}
		for _, r := range *s.Rules {
			seen[r.zone] = config.D("limit_req_zone", r.key, "zone="+r.zone+":"+r.size, "rate="+r.rate)
		}
	}
	out := make([]config.Directive, 0, len(seen))
	for _, z := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[z])
	}
	return out
}
