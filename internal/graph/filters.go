package graph

import (
	"errors"
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/validation"
)

// httpFilters validates and converts an HTTPRoute rule's filters.
func httpFilters(in *Input, routeNamespace string, src []gatewayv1.HTTPRouteFilter, matches []Match) (Filters, error) {
	var f Filters
	var errs []error
	seen := map[gatewayv1.HTTPRouteFilterType]bool{}
	for i, flt := range src {
		err := func() error {
			if err := onlyOwnConfig(string(flt.Type), httpFilterConfigs(flt)); err != nil {
				return err
			}
			if seen[flt.Type] && flt.Type != gatewayv1.HTTPRouteFilterRequestMirror && flt.Type != gatewayv1.HTTPRouteFilterExtensionRef {
				return fmt.Errorf("%s filter cannot be repeated", flt.Type)
			}
			seen[flt.Type] = true
			switch flt.Type {
			case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
				m, err := headerModifier(flt.RequestHeaderModifier)
				f.RequestHeaders = m
				return err
			case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
				m, err := headerModifier(flt.ResponseHeaderModifier)
				f.ResponseHeaders = m
				return err
			case gatewayv1.HTTPRouteFilterRequestRedirect:
				r, err := redirect(flt.RequestRedirect, matches)
				f.Redirect = r
				return err
			case gatewayv1.HTTPRouteFilterURLRewrite:
				r, err := rewrite(flt.URLRewrite, matches)
				f.Rewrite = r
				return err
			case gatewayv1.HTTPRouteFilterRequestMirror:
				m, err := mirror(in, KindHTTPRoute, routeNamespace, flt.RequestMirror)
				if m != nil {
					f.Mirrors = append(f.Mirrors, m)
				}
				return err
			case gatewayv1.HTTPRouteFilterCORS:
				c, err := cors(flt.CORS)
				f.CORS = c
				return err
			case gatewayv1.HTTPRouteFilterExternalAuth:
				ea, note, err := externalAuth(in, routeNamespace, flt.ExternalAuth)
				f.ExternalAuth = ea
				if note != "" {
					f.notes = append(f.notes, fmt.Sprintf("filters[%d]: %s", i, note))
				}
				return err
			case gatewayv1.HTTPRouteFilterExtensionRef:
				return f.addExtensionRef(i, flt.ExtensionRef)
			}
			return fmt.Errorf("filter type %s is not supported", flt.Type)
		}()
		if err != nil {
			errs = append(errs, fmt.Errorf("filters[%d]: %w", i, err))
		}
	}
	if f.Redirect != nil && f.Rewrite != nil {
		errs = append(errs, errors.New("filters: RequestRedirect and URLRewrite cannot be used together"))
	}
	if f.Redirect != nil && (f.ExternalAuth != nil || f.namesAuthentication()) {
		errs = append(errs, errors.New("filters: RequestRedirect cannot be used with an authentication filter (ExternalAuth, AuthenticationFilter): NGINX would answer the redirect before authenticating"))
	}
	return f, errors.Join(errs...)
}

// filterConfig is one configuration field of a filter: its name, the filter
// type it belongs to, and whether it is set.
type filterConfig struct {
	field string
	typ   string
	set   bool
}

// httpFilterConfigs lists an HTTPRoute filter's configuration fields.
func httpFilterConfigs(f gatewayv1.HTTPRouteFilter) []filterConfig {
	return []filterConfig{
		{"requestHeaderModifier", string(gatewayv1.HTTPRouteFilterRequestHeaderModifier), f.RequestHeaderModifier != nil},
		{"responseHeaderModifier", string(gatewayv1.HTTPRouteFilterResponseHeaderModifier), f.ResponseHeaderModifier != nil},
		{"requestMirror", string(gatewayv1.HTTPRouteFilterRequestMirror), f.RequestMirror != nil},
		{"requestRedirect", string(gatewayv1.HTTPRouteFilterRequestRedirect), f.RequestRedirect != nil},
		{"urlRewrite", string(gatewayv1.HTTPRouteFilterURLRewrite), f.URLRewrite != nil},
		{"cors", string(gatewayv1.HTTPRouteFilterCORS), f.CORS != nil},
		{"externalAuth", string(gatewayv1.HTTPRouteFilterExternalAuth), f.ExternalAuth != nil},
		{"extensionRef", string(gatewayv1.HTTPRouteFilterExtensionRef), f.ExtensionRef != nil},
	}
}

// onlyOwnConfig applies the Gateway API's rule that a filter sets only the
// configuration of its type (the API server's CEL rules may not have run).
func onlyOwnConfig(typ string, configs []filterConfig) error {
	for _, c := range configs {
		if c.set && c.typ != typ {
			return fmt.Errorf("filter.%s must be nil if the filter.type is not %s", c.field, c.typ)
		}
	}
	return nil
}

// LoopHeader is the request header that lists the Gateways a request went
// through, which NGINX sets on every request it proxies (package
// nginx/config, loop.go): routes cannot change it.
const LoopHeader = "X-Gatewall-Loop"

func headerModifier(src *gatewayv1.HTTPHeaderFilter) (*HeaderModifier, error) {
	if src == nil {
		return nil, errors.New("the filter's configuration is missing")
	}
	for _, l := range []struct {
		field string
		n     int
	}{{"set", len(src.Set)}, {"add", len(src.Add)}, {"remove", len(src.Remove)}} {
		if err := validation.ListLength(l.field, l.n, validation.MaxHeaderChanges); err != nil {
			return nil, err
		}
	}
	m := &HeaderModifier{}
	seen := map[string]bool{}
	check := func(name string) error {
		lower := strings.ToLower(name)
		if seen[lower] {
			return fmt.Errorf("header %q is modified twice", name)
		}
		if strings.EqualFold(name, LoopHeader) {
			return fmt.Errorf("header %q is Gatewall's own (it stops requests that go round through the Gateway) and cannot be modified", name)
		}
		seen[lower] = true
		return validation.HeaderName(name)
	}
	for _, h := range src.Set {
		if err := check(string(h.Name)); err != nil {
			return nil, err
		}
		if err := validation.HeaderValue(h.Value); err != nil {
			return nil, err
		}
		m.Set = append(m.Set, Header{Name: string(h.Name), Value: h.Value})
	}
	for _, h := range src.Add {
		if err := check(string(h.Name)); err != nil {
			return nil, err
		}
		if err := validation.HeaderValue(h.Value); err != nil {
			return nil, err
		}
		m.Add = append(m.Add, Header{Name: string(h.Name), Value: h.Value})
	}
	for _, name := range src.Remove {
		if err := check(name); err != nil {
			return nil, err
		}
		m.Remove = append(m.Remove, name)
	}
	return m, nil
}

func pathModifier(src *gatewayv1.HTTPPathModifier, matches []Match) (*PathModifier, error) {
	if src == nil {
		return nil, nil
	}
	switch src.Type {
	case gatewayv1.FullPathHTTPPathModifier:
		if src.ReplaceFullPath == nil {
			return nil, errors.New("path.replaceFullPath is required")
		}
		if src.ReplacePrefixMatch != nil {
			return nil, errors.New("path: type must be 'ReplacePrefixMatch' when replacePrefixMatch is set")
		}
		if err := validation.Path(*src.ReplaceFullPath); err != nil {
			return nil, err
		}
		return &PathModifier{Value: *src.ReplaceFullPath}, nil
	case gatewayv1.PrefixMatchHTTPPathModifier:
		if src.ReplacePrefixMatch == nil {
			return nil, errors.New("path.replacePrefixMatch is required")
		}
		if src.ReplaceFullPath != nil {
			return nil, errors.New("path: type must be 'ReplaceFullPath' when replaceFullPath is set")
		}
		if len(matches) != 1 || matches[0].Path.Type != PathPrefix {
			return nil, errors.New("path.replacePrefixMatch needs exactly one match, a PathPrefix match")
		}
		if err := validation.Path(*src.ReplacePrefixMatch); err != nil {
			return nil, err
		}
		return &PathModifier{ReplacePrefix: true, Value: *src.ReplacePrefixMatch}, nil
	}
	return nil, fmt.Errorf("path modifier type %q is not supported", src.Type)
}

func redirect(src *gatewayv1.HTTPRequestRedirectFilter, matches []Match) (*Redirect, error) {
	if src == nil {
		return nil, errors.New("the filter's configuration is missing")
	}
	r := &Redirect{StatusCode: 302}
	if src.StatusCode != nil {
		r.StatusCode = *src.StatusCode
	}
	switch r.StatusCode {
	case 301, 302, 303, 307, 308:
	default:
		return nil, fmt.Errorf("redirect statusCode %d is not supported", r.StatusCode)
	}
	if src.Scheme != nil {
		if *src.Scheme != "http" && *src.Scheme != "https" {
			return nil, fmt.Errorf("redirect scheme %q is not supported; use http or https", *src.Scheme)
		}
		r.Scheme = *src.Scheme
	}
	if src.Hostname != nil {
		if err := validation.ExactHostname(string(*src.Hostname)); err != nil {
			return nil, err
		}
		r.Hostname = string(*src.Hostname)
	}
	if src.Port != nil {
		if !validPort(*src.Port) {
			return nil, fmt.Errorf("redirect port %d is not between 1 and 65535", *src.Port)
		}
		r.Port = *src.Port
	}
	p, err := pathModifier(src.Path, matches)
	r.Path = p
	return r, err
}

func rewrite(src *gatewayv1.HTTPURLRewriteFilter, matches []Match) (*Rewrite, error) {
	if src == nil {
		return nil, errors.New("the filter's configuration is missing")
	}
	r := &Rewrite{}
	if src.Hostname != nil {
		if err := validation.ExactHostname(string(*src.Hostname)); err != nil {
			return nil, err
		}
		r.Hostname = string(*src.Hostname)
	}
	p, err := pathModifier(src.Path, matches)
	r.Path = p
	return r, err
}

func mirror(in *Input, routeKind, routeNamespace string, src *gatewayv1.HTTPRequestMirrorFilter) (*Mirror, error) {
	if src == nil {
		return nil, errors.New("the filter's configuration is missing")
	}
	basis := 10000
	switch {
	case src.Percent != nil && src.Fraction != nil:
		return nil, errors.New("requestMirror: set percent or fraction, not both")
	case src.Percent != nil:
		if *src.Percent < 0 || *src.Percent > 100 {
			return nil, fmt.Errorf("requestMirror percent %d is not between 0 and 100", *src.Percent)
		}
		basis = int(*src.Percent) * 100
	case src.Fraction != nil:
		num, den := int64(src.Fraction.Numerator), int64(100)
		if src.Fraction.Denominator != nil {
			den = int64(*src.Fraction.Denominator)
		}
		if den <= 0 || num < 0 || num > den {
			return nil, fmt.Errorf("requestMirror fraction %d/%d is not between 0 and 1", num, den)
		}
		basis = int(num * 10000 / den)
	}
	b, _ := resolveBackend(in, routeKind, routeNamespace, src.BackendRef, nil)
	if !b.Valid {
		return nil, errors.New(b.Err)
	}
	return &Mirror{Backend: b, Basis: basis}, nil
}
