package policy

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/validation"
)

// PartiallyInvalidDisabledMessage is the proposal's message for a route
// policy whose buffer sizes are moot under an inherited disable: true.
const PartiallyInvalidDisabledMessage = "Policy is not fully programmed: buffer size fields (bufferSize, buffers, busyBuffersSize) are ignored because buffering is disabled by an ancestor policy. Set disable to false to enable buffering and apply buffer size settings."

// +kubebuilder:rbac:groups=gateway.nginx.org,resources=proxysettingspolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.nginx.org,resources=proxysettingspolicies/status,verbs=get;update;patch

// proxySettingsKind is ProxySettingsPolicy: buffering of upstream responses.
var proxySettingsKind Kind = &inherited[Buffering]{
	gatewallKind: "ProxySettingsPolicy",
	affected:     v1alpha1.ProxySettingsPolicyAffected,
	include:      IncludeKind,
	targetsField: "targetRefs",
	noun:         "proxy settings",
	newObject:    func() v1alpha1.PolicyWithStatus { return &v1alpha1.ProxySettingsPolicy{} },
	newList:      func() client.ObjectList { return &v1alpha1.ProxySettingsPolicyList{} },
	parse: func(o v1alpha1.Policy) (Buffering, string, error) {
		p := o.(*v1alpha1.ProxySettingsPolicy)
		if errs := validation.ProxySettingsPolicy(p); len(errs) > 0 {
			return Buffering{}, "", errs.ToAggregate()
		}
		b, err := fromSpec(p.Spec.Buffering)
		return b, "", err
	},
	gateway: func(gw Buffering) ([]config.Directive, error) {
		if err := CheckProxy(gw, Buffering{}); err != nil {
			return nil, err
		}
		return append(proxyDirectives(gw), grpcDirectives(gw)...), nil
	},
	route:  routeSettings,
	pinned: func(gw Buffering, _ []Buffering, res *Result) []config.Directive { return pinnedDefaults(gw, res) },
}

// routeSettings returns the directives of a route's own policies for every
// location of the route, and what keeps them from applying in full. How a
// rule is proxied decides what has an effect: rules whose backends speak
// h2c (every GRPCRoute rule, and HTTPRoute rules with kubernetes.io/h2c
// backends) use grpc_pass, whose only buffering setting is
// grpc_buffer_size; the others use proxy_pass.
func routeSettings(rt routeTarget[Buffering]) ([]config.Directive, *targetIssue) {
	local, gw := rt.local, rt.gw
	grpcRules, proxyRules := rulesByPass(rt.route)
	if rt.ref.Kind == graph.KindGRPCRoute || (len(grpcRules) > 0 && len(proxyRules) == 0) {
		if err := checkGRPC(local); err != nil {
			return nil, &targetIssue{target: rt.ref, refused: true, msg: fmt.Sprintf("the proxy settings of %s (ProxySettingsPolicy %s on the route) cannot be configured: %s",
				rt.ref, rt.names, err)}
		}
		var issue *targetIssue
		if moot := grpcIneffective(local); moot != "" {
			msg := fmt.Sprintf("%s cannot apply to %s: it is proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize)", moot, rt.ref)
			if rt.ref.Kind != graph.KindGRPCRoute {
				msg = fmt.Sprintf("%s cannot apply to %s: its backends speak h2c, so it is proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize)", moot, rt.ref)
			}
			issue = &targetIssue{target: rt.ref, msg: msg}
		}
		return grpcDirectives(local), issue
	}
	if gw.Disable != nil && *gw.Disable && local.Disable == nil && local.sizesSet() {
		// The sizes are moot: nothing of the route's policies is rendered.
		return nil, &targetIssue{target: rt.ref, disabled: true, msg: PartiallyInvalidDisabledMessage}
	}
	if err := CheckProxy(local, gw); err != nil {
		return nil, &targetIssue{target: rt.ref, refused: true,
			msg: fmt.Sprintf("NGINX would reject the effective proxy settings of %s (%s, and NGINX's defaults): %s", rt.ref, rt.from("ProxySettingsPolicy"), err)}
	}
	dirs := proxyDirectives(local)
	if len(grpcRules) == 0 {
		return dirs, nil
	}
	// Each directive is ignored where its pass is not used, so the route's
	// locations can share one include file.
	dirs = append(dirs, grpcDirectives(local)...)
	if moot := grpcIneffective(local); moot != "" {
		return dirs, &targetIssue{target: rt.ref, msg: fmt.Sprintf(
			"%s cannot apply to %s of %s: their backends speak h2c, so they are proxied with grpc_pass, whose only buffering setting is grpc_buffer_size (bufferSize); its other rules get every field",
			moot, ruleList(grpcRules), rt.ref)}
	}
	return dirs, nil
}

// rulesByPass splits a route's configured rules (by index) into those
// proxied with grpc_pass and those proxied with proxy_pass.
func rulesByPass(r *graph.Route) (grpc, proxy []int) {
	for _, rule := range r.ValidRules() {
		if rule.H2C {
			grpc = append(grpc, rule.Index)
		} else {
			proxy = append(proxy, rule.Index)
		}
	}
	return grpc, proxy
}

func ruleList(idx []int) string {
	s := make([]string, 0, len(idx))
	for _, i := range idx {
		s = append(s, fmt.Sprintf("rules[%d]", i))
	}
	return strings.Join(s, ", ")
}

// IncludeKind names ProxySettingsPolicy's include files.
const IncludeKind = "proxy-settings"
