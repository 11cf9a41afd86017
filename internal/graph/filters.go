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
	for i, flt := range src {
		err := func() error {
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
				if f.CORS != nil {
					return errors.New("a rule takes one CORS filter")
				}
				c, err := cors(flt.CORS)
				f.CORS = c
				return err
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
	return f, errors.Join(errs...)
}

func headerModifier(src *gatewayv1.HTTPHeaderFilter) (*HeaderModifier, error) {
	if src == nil {
		return nil, errors.New("the filter's configuration is missing")
	}
	m := &HeaderModifier{}
	seen := map[string]bool{}
	check := func(name string) error {
		lower := strings.ToLower(name)
		if seen[lower] {
			return fmt.Errorf("header %q is modified twice", name)
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
		if err := validation.Path(*src.ReplaceFullPath); err != nil {
			return nil, err
		}
		return &PathModifier{Value: *src.ReplaceFullPath}, nil
	case gatewayv1.PrefixMatchHTTPPathModifier:
		if src.ReplacePrefixMatch == nil {
			return nil, errors.New("path.replacePrefixMatch is required")
		}
		for _, m := range matches {
			if m.Path.Type != PathPrefix {
				return nil, errors.New("path.replacePrefixMatch needs every match to be a PathPrefix match")
			}
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
