package snapgen

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/api/gateway/v1alpha2"
)

// Features lists the kinds of things a snapshot holds (object kinds,
// listener protocols, match, filter and policy kinds, weights, long
// names), sorted; tests use them to show that generated snapshots, or a
// seed corpus, cover everything the generator makes.
func Features(s *Snapshot) []string {
	set := map[string]bool{}
	for _, o := range s.Objects {
		switch o := o.(type) {
		case *gatewayv1.Gateway:
			for _, l := range o.Spec.Listeners {
				set["listener/"+string(l.Protocol)] = true
				if l.Hostname != nil {
					set["listener/hostname/"+hostnameShape(string(*l.Hostname))] = true
				}
				if l.TLS != nil && len(l.TLS.Options) > 0 {
					set["listener/tls-options"] = true
				}
			}
			if o.Spec.TLS != nil && o.Spec.TLS.Frontend != nil {
				set["gateway/client-validation"] = true
			}
		case *gatewayv1.ListenerSet:
			set["ListenerSet"] = true
		case *gatewayv1.HTTPRoute:
			set["HTTPRoute"] = true
			for _, r := range o.Spec.Rules {
				for _, m := range r.Matches {
					httpMatchFeatures(set, m)
				}
				for _, f := range r.Filters {
					set["filter/"+string(f.Type)] = true
				}
				for _, b := range r.BackendRefs {
					weightFeature(set, b.Weight)
				}
			}
		case *gatewayv1.GRPCRoute:
			set["GRPCRoute"] = true
			for _, r := range o.Spec.Rules {
				for _, m := range r.Matches {
					if m.Method != nil {
						t := gatewayv1.GRPCMethodMatchExact
						if m.Method.Type != nil {
							t = *m.Method.Type
						}
						set["match/grpc/"+string(t)] = true
					}
				}
				for _, f := range r.Filters {
					set["grpc-filter/"+string(f.Type)] = true
				}
			}
		case *gatewayv1.BackendTLSPolicy:
			set["BackendTLSPolicy"] = true
		case *v1alpha2.NginxProxy:
			set["NginxProxy/waf/"+string(o.Spec.WAF)] = true
			if r := o.Spec.RewriteClientIP; r != nil && r.Mode != nil {
				set["NginxProxy/rewriteClientIP/"+string(*r.Mode)] = true
			}
			if l := o.Spec.Logging; l != nil && l.AccessLog != nil && l.AccessLog.Format != nil {
				set["NginxProxy/accessLog/format"] = true
			}
			if o.Spec.Compression != nil {
				set["NginxProxy/compression"] = true
			}
			if o.Spec.TracingOn() {
				set["NginxProxy/tracing"] = true
			}
			if o.Spec.DisableHTTP2 != nil && *o.Spec.DisableHTTP2 {
				set["NginxProxy/disableHTTP2"] = true
			}
		case *v1alpha1.ProxySettingsPolicy:
			set["ProxySettingsPolicy"] = true
		case *v1alpha1.WAFGatewayBindingPolicy:
			set["WAFGatewayBindingPolicy"] = true
			for _, l := range o.Spec.SecurityLogs {
				set["security-log/"+string(l.Destination.Type)] = true
			}
		case *corev1.Service:
			for _, p := range o.Spec.Ports {
				if p.AppProtocol != nil {
					set["appProtocol/"+*p.AppProtocol] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func httpMatchFeatures(set map[string]bool, m gatewayv1.HTTPRouteMatch) {
	if m.Path != nil && m.Path.Type != nil {
		set["match/path/"+string(*m.Path.Type)] = true
	}
	if m.Method != nil {
		set["match/method"] = true
	}
	for _, h := range m.Headers {
		t := gatewayv1.HeaderMatchExact
		if h.Type != nil {
			t = *h.Type
		}
		set["match/header/"+string(t)] = true
	}
	for _, q := range m.QueryParams {
		t := gatewayv1.QueryParamMatchExact
		if q.Type != nil {
			t = *q.Type
		}
		set["match/query/"+string(t)] = true
	}
}

func weightFeature(set map[string]bool, w *int32) {
	switch {
	case w == nil:
	case *w == 0:
		set["weight/0"] = true
	case *w == 1000000:
		set["weight/1000000"] = true
	case *w > 1 && *w < 1000000:
		set["weight/between"] = true
	}
}

func hostnameShape(h string) string {
	shape := "exact"
	if len(h) > 1 && h[0] == '*' {
		shape = "wildcard"
	}
	if len(h) >= 200 {
		shape += "-long"
	}
	return shape
}
