package graph

import (
	"errors"
	"fmt"
	"regexp"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/validation"
)

// CORSDefaultMaxAge is the Gateway API's default of a CORS filter's maxAge,
// in seconds, used when it is unset.
const CORSDefaultMaxAge = 5

// CORS is a rule's CORS filter, validated. Origins, methods and header names
// reach nginx.conf, so each passed an allow-list.
type CORS struct {
	// Origins are "scheme://host[:port]", the host possibly starting with a
	// "*." wildcard, or the single entry "*".
	Origins []string
	// Methods are HTTP methods, or the single entry "*".
	Methods []string
	// Headers are request header names, or the single entry "*".
	Headers []string
	// Expose are response header names (or "*").
	Expose      []string
	Credentials bool
	// MaxAge is how long a preflight answer may be cached, in seconds.
	MaxAge int32
}

// corsOriginRE is the Gateway API's CORSOrigin pattern: a lone "*", or an
// http(s) origin whose host may start with a wildcard label, with an
// optional port.
var corsOriginRE = regexp.MustCompile(`^(\*|https?://((\*\.)?([a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(:[0-9]{1,5})?)$`)

// cors validates a CORS filter. maxAge must be at least 1, as the Gateway
// API's schema says. Its default (5) is the API server's to fill in when the
// field is unset: the Go type cannot tell an unset maxAge from 0, so 0 here
// is a value that bypassed the schema and is refused like a negative one
// (the render command fills the default in as the API server does).
func cors(src *gatewayv1.HTTPCORSFilter) (*CORS, error) {
	if src == nil {
		return nil, errors.New("the filter's configuration is missing")
	}
	for _, l := range []struct {
		field    string
		n, limit int
	}{
		{"allowOrigins", len(src.AllowOrigins), validation.MaxCORSListItems},
		{"allowMethods", len(src.AllowMethods), validation.MaxCORSMethods},
		{"allowHeaders", len(src.AllowHeaders), validation.MaxCORSListItems},
		{"exposeHeaders", len(src.ExposeHeaders), validation.MaxCORSListItems},
	} {
		if err := validation.ListLength(l.field, l.n, l.limit); err != nil {
			return nil, err
		}
	}
	c := &CORS{Credentials: src.AllowCredentials != nil && *src.AllowCredentials, MaxAge: src.MaxAge}
	if c.MaxAge == 0 {
		// Unset: the Go type cannot tell it from 0, which the schema
		// refuses, and an API server without the schema's default (an
		// older or loosened CRD) stores it unset.
		c.MaxAge = CORSDefaultMaxAge
	}
	for _, o := range src.AllowOrigins {
		if !corsOriginRE.MatchString(string(o)) || len(o) > 253 {
			return nil, fmt.Errorf("allowOrigins: %q is not an origin (scheme://host[:port], the host may start with \"*.\") nor \"*\"", o)
		}
		c.Origins = append(c.Origins, string(o))
	}
	for _, m := range src.AllowMethods {
		if m != "*" {
			if err := validation.HTTPMethod(string(m)); err != nil {
				return nil, fmt.Errorf("allowMethods: %w", err)
			}
		}
		c.Methods = append(c.Methods, string(m))
	}
	names := func(field string, in []gatewayv1.HTTPHeaderName) ([]string, error) {
		var out []string
		for _, h := range in {
			if h != "*" {
				if err := validation.HeaderName(string(h)); err != nil {
					return nil, fmt.Errorf("%s: %w", field, err)
				}
			}
			out = append(out, string(h))
		}
		return out, nil
	}
	var err error
	if c.Headers, err = names("allowHeaders", src.AllowHeaders); err != nil {
		return nil, err
	}
	if c.Expose, err = names("exposeHeaders", src.ExposeHeaders); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		field string
		list  []string
	}{{"allowOrigins", c.Origins}, {"allowMethods", c.Methods}, {"allowHeaders", c.Headers}} {
		if len(f.list) > 1 && contains(f.list, "*") {
			return nil, fmt.Errorf("%s: \"*\" cannot be listed with other values", f.field)
		}
	}
	if c.MaxAge < 1 {
		return nil, fmt.Errorf("maxAge: %d is less than 1 (seconds); leave it unset for the Gateway API's default of %d", src.MaxAge, CORSDefaultMaxAge)
	}
	return c, corsTokens(c)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
