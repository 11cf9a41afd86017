package snapgen

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
)

// clientSettingsPolicy adds a ClientSettingsPolicy with values at NGINX's
// edges (a header timeout in ms, which NGINX refuses; sizes with g, which
// some of its directives do not take).
func (g *gen) clientSettingsPolicy(index int) {
	p := &v1alpha1.ClientSettingsPolicy{ObjectMeta: meta(nsDefault, fmt.Sprintf("csp-%d", index))}
	p.CreationTimestamp = g.timestamp()
	p.Spec.TargetRef = g.targetRefs(nsDefault, false)[0]
	size := func() *v1alpha1.ByteSize {
		return ptr.To(v1alpha1.ByteSize(oneOf(g, "1m", "0", "8k", "1g", "9999g", "10x")))
	}
	duration := func() *v1alpha1.Duration {
		return ptr.To(v1alpha1.Duration(oneOf(g, "30s", "0", "500ms", "1h", "9999h", "5d")))
	}
	if g.one(2) {
		p.Spec.Body = &v1alpha1.ClientBody{}
		if g.one(2) {
			p.Spec.Body.MaxSize = size()
		}
		if g.one(2) {
			p.Spec.Body.BufferSize = size()
		}
		if g.one(2) {
			p.Spec.Body.Timeout = duration()
		}
	}
	if g.one(2) {
		k := &v1alpha1.ClientKeepAlive{}
		if g.one(2) {
			k.Requests = ptr.To(oneOf[int32](g, 0, 100, -1))
		}
		if g.one(2) {
			k.Time = duration()
		}
		if g.one(2) {
			k.Timeout = &v1alpha1.ClientKeepAliveTimeout{}
			if g.one(2) {
				k.Timeout.Server = duration()
			}
			if g.one(2) {
				k.Timeout.Header = duration()
			}
		}
		if g.one(4) {
			k.MinTimeout = duration()
		}
		p.Spec.KeepAlive = k
	}
	g.add(p)
}

// rateLimitPolicy adds a RateLimitPolicy with values at NGINX's edges (a
// zero rate, zones too small, keys with variables outside the allow-list).
func (g *gen) rateLimitPolicy(index int) {
	p := &v1alpha1.RateLimitPolicy{ObjectMeta: meta(nsDefault, fmt.Sprintf("rlp-%d", index))}
	p.CreationTimestamp = g.timestamp()
	p.Spec.TargetRefs = g.targetRefs(nsDefault, false)
	rl := &v1alpha1.RateLimit{}
	if g.one(2) {
		rl.Local = &v1alpha1.LocalRateLimit{}
		for range g.intn(3) {
			r := v1alpha1.RateLimitRule{Rate: v1alpha1.Rate(oneOf(g, "10r/s", "1r/m", "0r/s", "999999999r/s")),
				Key: oneOf(g, "$binary_remote_addr", "$http_x_user$uri", "$request_body", "a b")}
			if g.one(2) {
				r.ZoneSize = ptr.To(v1alpha1.ByteSize(oneOf(g, "10m", "32k", "16k", "1g")))
			}
			if g.one(2) {
				r.Burst = ptr.To(oneOf[int32](g, 0, 5, 100))
			}
			if g.one(2) {
				r.Delay = ptr.To(oneOf[int32](g, 0, 3))
			} else if g.one(2) {
				r.NoDelay = ptr.To(true)
			}
			rl.Local.Rules = append(rl.Local.Rules, r)
		}
	}
	if g.one(2) {
		rl.DryRun = ptr.To(g.one(2))
	}
	if g.one(2) {
		rl.LogLevel = ptr.To(v1alpha1.RateLimitLogLevel(oneOf(g, "warn", "info", "debug")))
	}
	if g.one(2) {
		rl.RejectCode = ptr.To(oneOf[int32](g, 429, 503, 399))
	}
	p.Spec.RateLimit = rl
	g.add(p)
}

// upstreamSettingsPolicy adds an UpstreamSettingsPolicy with values at
// NGINX's edges (zones too small or in g, hash keys outside the allow-list,
// the NGINX Plus methods) on Services of the default namespace, and gives
// the Services of those with useClusterIP a cluster IP, an IPv6 one, none
// (headless), text that is no address, an IPv6 address whose zone is
// text, or loopback.
func (g *gen) upstreamSettingsPolicy(index int) {
	svcs := g.services[nsDefault]
	if len(svcs) == 0 {
		return
	}
	p := &v1alpha1.UpstreamSettingsPolicy{ObjectMeta: meta(nsDefault, fmt.Sprintf("usp-%d", index))}
	p.CreationTimestamp = g.timestamp()
	for range 1 + g.intn(2) {
		name := oneOf(g, svcs...).name
		p.Spec.TargetRefs = append(p.Spec.TargetRefs, gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: gatewayv1.ObjectName(name)})
	}
	s := &p.Spec
	if g.one(2) {
		s.ZoneSize = ptr.To(v1alpha1.ByteSize(oneOf(g, "64k", "1m", "1g", "16k")))
	}
	if g.one(2) {
		s.KeepAlive = &v1alpha1.UpstreamKeepAlive{Connections: ptr.To(oneOf[int32](g, 0, 1, 64))}
		if g.one(2) {
			s.KeepAlive.Requests = ptr.To(oneOf[int32](g, 0, 100))
		}
		if g.one(2) {
			s.KeepAlive.Time = ptr.To(v1alpha1.Duration(oneOf(g, "1h", "500ms")))
		}
		if g.one(2) {
			s.KeepAlive.Timeout = ptr.To(v1alpha1.Duration(oneOf(g, "60s", "0")))
		}
	}
	if g.one(2) {
		s.LoadBalancingMethod = ptr.To(v1alpha1.LoadBalancingType(oneOf(g, "least_conn", "ip_hash", "hash", "hash consistent",
			"random two least_conn", "least_time header", "round_robin")))
	}
	if g.one(2) {
		s.HashMethodKey = ptr.To(v1alpha1.HashMethodKey(oneOf(g, "$remote_addr", "$arg_user", "$request_id")))
	}
	if g.one(2) {
		s.UseClusterIP = ptr.To(true)
		ip := oneOf(g, "10.96.0.10", "fd00::10", "None", "10.0.0.1; return 200", "fe80::1%a;return 200", "127.0.0.1")
		for _, o := range g.snap.Objects {
			if svc, ok := o.(*corev1.Service); ok && svc.Namespace == nsDefault && string(p.Spec.TargetRefs[0].Name) == svc.Name {
				svc.Spec.ClusterIP = ip
			}
		}
	}
	g.add(p)
}
