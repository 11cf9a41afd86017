package validation

import (
	"fmt"
	"regexp"
	"strings"
)

// NGINX-safe values. Everything the Gateway API lets users write that ends up
// in nginx.conf is checked here against an allow-list, before rendering quotes
// it. The lists reject what could change the meaning of the configuration —
// '{', '}', ';', quotes, '\', '$' (variable interpolation), whitespace and
// control characters — and overlong values, with a message saying what is wrong.

// Length limits of values that reach nginx.conf.
const (
	maxHostnameLength    = 253
	maxPathLength        = 1024
	maxHeaderNameLength  = 256
	maxHeaderValueLength = 4096
	maxQueryNameLength   = 256
	maxQueryValueLength  = 1024
)

var (
	// hostnameRE is a lower-case DNS name, optionally with a leading wildcard label.
	hostnameRE = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// pathRE is an absolute URI path of RFC 3986 path characters, minus the
	// ones NGINX's configuration syntax gives meaning to (';', quotes, '$').
	pathRE = regexp.MustCompile(`^/[A-Za-z0-9._~!&()*+,=:@%/-]*$`)
	// regexPathRE is a regular expression path: path characters plus regex
	// syntax; braces only as quantifiers, '$' only as the final anchor (checked separately).
	regexPathRE = regexp.MustCompile(`^[A-Za-z0-9._~!&()*+,=:@%/\-\^\[\]|?\\{}$]+$`)
	// headerNameRE: NGINX exposes request headers as $http_<name> with '-'
	// mapped to '_', and ignores headers with underscores by default, so only
	// letters, digits and '-' can be matched and set reliably.
	headerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)
	// headerValueRE: printable ASCII without the characters NGINX interprets.
	headerValueRE = regexp.MustCompile(`^[A-Za-z0-9 !#%&()*+,./:<=>?@\[\]^_` + "`" + `|~-]*$`)
	queryNameRE   = regexp.MustCompile(`^[A-Za-z0-9._~!*()+,:@%-]+$`)
	queryValueRE  = regexp.MustCompile(`^[A-Za-z0-9._~!*()+,:@%/?=-]*$`)
)

const forbidden = "must not contain '{', '}', ';', quotes, '\\', '$', whitespace or control characters"

func lengthError(what string, n, limit int) error {
	return fmt.Errorf("%s is %d characters long, more than the %d NGINX configuration allows here", what, n, limit)
}

// Hostname checks a hostname (exact or with a leading "*." wildcard label).
func Hostname(h string) error {
	if len(h) > maxHostnameLength {
		return lengthError("hostname", len(h), maxHostnameLength)
	}
	if !hostnameRE.MatchString(h) {
		return fmt.Errorf("hostname %q must be a lower-case DNS name, optionally starting with a \"*.\" wildcard label", h)
	}
	return nil
}

// ExactHostname checks a hostname without wildcard, as redirects and rewrites need.
func ExactHostname(h string) error {
	if strings.HasPrefix(h, "*") {
		return fmt.Errorf("hostname %q: a wildcard is not allowed here", h)
	}
	return Hostname(h)
}

// MatchPath checks an Exact or PathPrefix path to match. NGINX matches
// locations against the decoded path, so percent-encoded characters cannot be
// matched as written and are refused.
func MatchPath(p string) error {
	if strings.Contains(p, "%") {
		return fmt.Errorf("path %q: percent-encoded characters cannot be matched (NGINX matches the decoded path)", p)
	}
	return Path(p)
}

// Path checks a path in a redirect or rewrite.
func Path(p string) error {
	if len(p) > maxPathLength {
		return lengthError("path", len(p), maxPathLength)
	}
	if !pathRE.MatchString(p) {
		return fmt.Errorf("path %q must start with '/' and use only URI path characters; it %s", p, forbidden)
	}
	if strings.Contains(p, "//") || containsDotSegment(p) {
		return fmt.Errorf("path %q must not contain '//' or '.'/'..' segments", p)
	}
	return nil
}

func containsDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// RegexPath checks a RegularExpression path. NGINX compiles it with PCRE2;
// the check requires it to compile as a Go (RE2) expression, whose syntax is
// nearly a subset (so lookarounds and backreferences are refused), and to
// mean the same to PCRE2 (pcreDifference).
func RegexPath(p string) error {
	if len(p) > maxPathLength {
		return lengthError("path", len(p), maxPathLength)
	}
	if !regexPathRE.MatchString(p) {
		return fmt.Errorf("regular expression path %q uses characters NGINX configuration cannot take safely; it %s", p, forbidden)
	}
	if i := strings.IndexByte(p, '$'); i >= 0 && i != len(p)-1 {
		return fmt.Errorf("regular expression path %q: '$' is only allowed as the final anchor", p)
	}
	if _, err := regexp.Compile(p); err != nil {
		return fmt.Errorf("regular expression path %q does not compile: %w", p, err)
	}
	if err := pcreDifference(p); err != nil {
		return fmt.Errorf("regular expression path %q: %w", p, err)
	}
	return nil
}

// HeaderName checks an HTTP header name to match or modify.
func HeaderName(n string) error {
	if len(n) > maxHeaderNameLength {
		return lengthError("header name", len(n), maxHeaderNameLength)
	}
	if !headerNameRE.MatchString(n) {
		return fmt.Errorf("header name %q: NGINX can only match and set header names of letters, digits and '-'", n)
	}
	return nil
}

// HeaderValue checks an HTTP header value to match or set.
func HeaderValue(v string) error {
	if len(v) > maxHeaderValueLength {
		return lengthError("header value", len(v), maxHeaderValueLength)
	}
	if !headerValueRE.MatchString(v) {
		return fmt.Errorf("header value %q %s", v, forbidden)
	}
	return nil
}

// HeaderValueRegex checks a RegularExpression header value match.
func HeaderValueRegex(v string) error {
	if len(v) > maxHeaderValueLength {
		return lengthError("header value", len(v), maxHeaderValueLength)
	}
	if err := RegexValue("header value", v); err != nil {
		return err
	}
	return nil
}

// RegexValue checks a regular expression used in a map: regex syntax is
// allowed, but nothing that could end the quoted string or interpolate, and
// only what Go (RE2) and NGINX's PCRE2 read the same way.
func RegexValue(what, v string) error {
	if strings.ContainsAny(v, "\"'{};\n\r\t") || strings.ContainsRune(v, 0) {
		return fmt.Errorf("%s %q %s", what, v, forbidden)
	}
	if i := strings.IndexByte(v, '$'); i >= 0 && i != len(v)-1 {
		return fmt.Errorf("%s %q: '$' is only allowed as the final anchor", what, v)
	}
	for _, r := range v {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("%s %q %s", what, v, forbidden)
		}
	}
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("%s %q does not compile: %w", what, v, err)
	}
	if err := pcreDifference(v); err != nil {
		return fmt.Errorf("%s %q: %w", what, v, err)
	}
	return nil
}

// QueryParamName checks a query parameter name to match.
func QueryParamName(n string) error {
	if len(n) > maxQueryNameLength {
		return lengthError("query parameter name", len(n), maxQueryNameLength)
	}
	if !queryNameRE.MatchString(n) {
		return fmt.Errorf("query parameter name %q must use only URI query characters; it %s", n, forbidden)
	}
	return nil
}

// QueryParamValue checks a query parameter value to match exactly.
func QueryParamValue(v string) error {
	if len(v) > maxQueryValueLength {
		return lengthError("query parameter value", len(v), maxQueryValueLength)
	}
	if !queryValueRE.MatchString(v) {
		return fmt.Errorf("query parameter value %q must use only URI query characters; it %s", v, forbidden)
	}
	return nil
}

// httpMethods are the methods the Gateway API lets a route match.
var httpMethods = map[string]bool{
	"GET": true, "HEAD": true, "POST": true, "PUT": true, "DELETE": true,
	"CONNECT": true, "OPTIONS": true, "TRACE": true, "PATCH": true,
}

// HTTPMethod checks a method to match.
func HTTPMethod(m string) error {
	if !httpMethods[m] {
		return fmt.Errorf("method %q is not an HTTP method the Gateway API supports", m)
	}
	return nil
}

// ObjectReference checks the namespace and name of an object whose names
// reach nginx.conf (upstream names, certificate paths): a DNS-1123 label
// namespace and a DNS-1123 subdomain name.
func ObjectReference(namespace, name string) error {
	if !dns1123LabelRE.MatchString(namespace) || len(namespace) > 63 {
		return fmt.Errorf("namespace %q is not a valid namespace name", namespace)
	}
	if !dns1123SubdomainRE.MatchString(name) || len(name) > 253 {
		return fmt.Errorf("name %q is not a valid object name", name)
	}
	return nil
}
