package graph

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/conditions"
	"github.com/gatewall/gatewall/internal/validation"
)

func newGRPCRoute(in *Input, k types.NamespacedName, gr *gatewayv1.GRPCRoute, refs []*ParentRef) *Route {
	r := newRoute(in, KindGRPCRoute, k, gr, gr.Spec.Hostnames, refs)
	if r.refuseOverLimit(grpcRouteLimits(&gr.Spec)) {
		return r
	}
	matches := 0
	for _, rule := range gr.Spec.Rules {
		matches += len(rule.Matches)
	}
	r.checkMatchCount(matches)
	r.checkParentRefs(gr.Spec.ParentRefs)
	var resolved resolvedRefs
	for i, src := range gr.Spec.Rules {
		rule := &Rule{Index: i, Valid: true, H2C: true}
		var errs []error
		if len(src.Matches) == 0 {
			rule.Matches = []Match{{Path: PathMatch{Type: PathPrefix, Value: "/"}}}
		}
		for j, m := range src.Matches {
			match, err := grpcMatch(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("matches[%d]: %w", j, err))
				continue
			}
			rule.Matches = append(rule.Matches, match)
		}
		f, err := grpcFilters(in, k.Namespace, src.Filters)
		if err != nil {
			errs = append(errs, err)
		}
		rule.Filters = f
		if err := resolveFilters(in, k.Namespace, rule, &resolved); err != nil {
			errs = append(errs, err)
		}
		f = rule.Filters
		errs = append(errs, unsupportedRuleFields(src.SessionPersistence)...)
		rule.Filters = f
		for _, m := range f.Mirrors {
			resolved.addRefused(m.Backend)
		}
		for _, br := range src.BackendRefs {
			if len(br.Filters) > 0 {
				errs = append(errs, errors.New("backendRefs[].filters are not supported"))
			}
			b, why := resolveBackend(in, KindGRPCRoute, k.Namespace, br.BackendObjectReference, br.Weight)
			resolved.add(b, why)
			if b.Weight > 0 {
				rule.Backends = append(rule.Backends, b)
			}
		}
		externalNameHosts(rule)
		if err := headerTokens(rule); err != nil {
			errs = append(errs, err)
		}
		if err := grpcHeaders(rule); err != nil {
			errs = append(errs, err)
		}
		tls, err := ruleTLS(rule.Backends)
		if err != nil {
			errs = append(errs, err)
		}
		rule.TLS = tls
		if len(errs) > 0 {
			rule.Valid, rule.Err = false, errors.Join(errs...).Error()
		}
		r.Rules = append(r.Rules, rule)
	}
	r.setResolvedRefs(&resolved)
	return r
}

// grpcMatch maps a gRPC service/method match to a path match on
// /<service>/<method>, the path gRPC uses over HTTP/2.
func grpcMatch(m gatewayv1.GRPCRouteMatch) (Match, error) {
	out := Match{Path: PathMatch{Type: PathPrefix, Value: "/"}}
	if mm := m.Method; mm != nil {
		svc, method := "", ""
		if mm.Service != nil {
			svc = *mm.Service
		}
		if mm.Method != nil {
			method = *mm.Method
		}
		if svc == "" && method == "" {
			return out, errors.New("method: one or both of service and method must be set")
		}
		regex, err := regexType(mm.Type, gatewayv1.GRPCMethodMatchExact, gatewayv1.GRPCMethodMatchRegularExpression)
		if err != nil {
			return out, fmt.Errorf("method: %w", err)
		}
		if regex {
			for _, part := range []struct{ what, v string }{{"service", svc}, {"method", method}} {
				if part.v == "" {
					continue
				}
				if err := validation.GRPCRegex(part.what, part.v); err != nil {
					return out, err
				}
			}
			out.Path = PathMatch{Type: PathRegex, Value: fmt.Sprintf("^/%s/%s$", orAny(svc), orAny(method))}
		} else {
			if svc != "" {
				if err := validation.GRPCService(svc); err != nil {
					return out, err
				}
			}
			if method != "" {
				if err := validation.GRPCMethod(method); err != nil {
					return out, err
				}
			}
			switch {
			case svc != "" && method != "":
				out.Path = PathMatch{Type: PathExact, Value: "/" + svc + "/" + method}
			case svc != "":
				out.Path = PathMatch{Type: PathPrefix, Value: "/" + svc}
			case method != "":
				out.Path = PathMatch{Type: PathRegex, Value: "^/[^/]+/" + method + "$"}
			}
		}
	}
	if err := validation.ListLength("headers", len(m.Headers), validation.MaxMatchHeaders); err != nil {
		return out, err
	}
	seen := map[string]bool{}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue
		}
		seen[name] = true
		regex, err := regexType(h.Type, gatewayv1.GRPCHeaderMatchExact, gatewayv1.GRPCHeaderMatchRegularExpression)
		if err != nil {
			return out, fmt.Errorf("header %s: %w", conditions.Quote(string(h.Name)), err)
		}
		vm, err := headerMatch(string(h.Name), h.Value, regex)
		if err != nil {
			return out, err
		}
		out.Headers = append(out.Headers, vm)
	}
	return out, matchTokens(out)
}

func orAny(s string) string {
	if s == "" {
		return "[^/]+"
	}
	return "(" + s + ")"
}

func grpcFilters(in *Input, routeNamespace string, src []gatewayv1.GRPCRouteFilter) (Filters, error) {
	var f Filters
	var errs []error
	seen := map[gatewayv1.GRPCRouteFilterType]bool{}
	for i, flt := range src {
		err := onlyOwnConfig(string(flt.Type), grpcFilterConfigs(flt))
		if err == nil && seen[flt.Type] && flt.Type != gatewayv1.GRPCRouteFilterRequestMirror && flt.Type != gatewayv1.GRPCRouteFilterExtensionRef {
			err = fmt.Errorf("%s filter cannot be repeated", flt.Type)
		}
		seen[flt.Type] = true
		if err != nil {
			errs = append(errs, fmt.Errorf("filters[%d]: %w", i, err))
			continue
		}
		switch flt.Type {
		case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
			f.RequestHeaders, err = headerModifier(flt.RequestHeaderModifier)
		case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
			f.ResponseHeaders, err = headerModifier(flt.ResponseHeaderModifier)
		case gatewayv1.GRPCRouteFilterRequestMirror:
			var m *Mirror
			m, err = mirror(in, KindGRPCRoute, routeNamespace, flt.RequestMirror)
			if m != nil {
				f.Mirrors = append(f.Mirrors, m)
			}
		case gatewayv1.GRPCRouteFilterExtensionRef:
			err = f.addExtensionRef(i, flt.ExtensionRef)
		default:
			err = fmt.Errorf("filter type %s is not supported", flt.Type)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("filters[%d]: %w", i, err))
		}
	}
	return f, errors.Join(errs...)
}

// grpcFilterConfigs lists a GRPCRoute filter's configuration fields.
func grpcFilterConfigs(f gatewayv1.GRPCRouteFilter) []filterConfig {
	return []filterConfig{
		{"requestHeaderModifier", string(gatewayv1.GRPCRouteFilterRequestHeaderModifier), f.RequestHeaderModifier != nil},
		{"responseHeaderModifier", string(gatewayv1.GRPCRouteFilterResponseHeaderModifier), f.ResponseHeaderModifier != nil},
		{"requestMirror", string(gatewayv1.GRPCRouteFilterRequestMirror), f.RequestMirror != nil},
		{"extensionRef", string(gatewayv1.GRPCRouteFilterExtensionRef), f.ExtensionRef != nil},
	}
}
