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
	matches := 0
	for _, rule := range gr.Spec.Rules {
		matches += len(rule.Matches)
	}
	shape := routeShape{kind: KindGRPCRoute, key: k, source: gr, hostnames: gr.Spec.Hostnames, parentRefs: gr.Spec.ParentRefs,
		overLimit: grpcRouteLimits(&gr.Spec), matches: matches}
	return buildRoute(in, shape, refs, len(gr.Spec.Rules), func(i int, resolved *resolvedRefs) *Rule {
		src := gr.Spec.Rules[i]
		return buildRule(in, KindGRPCRoute, k.Namespace, ruleShape[gatewayv1.GRPCRouteMatch]{
			rule: &Rule{Index: i, Valid: true, H2C: true}, matches: src.Matches, match: grpcMatch,
			filters: func([]Match) (Filters, error) { return grpcFilters(in, k.Namespace, src.Filters) },
			session: src.SessionPersistence, backends: grpcBackends(src.BackendRefs),
			after: func(rule *Rule, _ Filters) []error {
				if err := grpcHeaders(rule); err != nil {
					return []error{err}
				}
				return nil
			},
		}, resolved)
	})
}

// grpcBackends are a GRPCRoute rule's backendRefs, whose own filters are
// not supported.
func grpcBackends(refs []gatewayv1.GRPCBackendRef) []backendShape {
	out := make([]backendShape, 0, len(refs))
	for _, br := range refs {
		shape := backendShape{ref: br.BackendObjectReference, weight: br.Weight}
		if len(br.Filters) > 0 {
			shape.filter = func(int) (func(*Backend), error) {
				return nil, errors.New("backendRefs[].filters are not supported")
			}
		}
		out = append(out, shape)
	}
	return out
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
