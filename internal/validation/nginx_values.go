package validation

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"unicode/utf8"
)

// NGINX-safe values. Everything the Gateway API lets users write that ends up
// in nginx.conf is checked here against an allow-list, before rendering quotes
// it (package syntax). Where rendering can carry a character safely — header
// values and regular expressions are written in double quotes, which hold
// ';', '{', '}', spaces and escaped quotes and backslashes as text, and
// header values' '$' is written so that NGINX reads only allow-listed
// variables (syntax.HeaderValue) — it is carried; the lists refuse what no
// encoding makes safe (control characters, what HTTP forbids, what PCRE2
// reads differently from RE2) and, for other values (paths, hostnames,
// query names), what could change the meaning of the configuration: '{',
// '}', ';', quotes, '\', '$' (variable interpolation), whitespace and
// control characters. Overlong values are refused too, with a message saying
// what is wrong.

// Length limits of values that reach nginx.conf: the Gateway API's schema
// limits, which an object that bypassed the API server may exceed. Values
// also get the NGINX token limit (package syntax) where the graph knows
// how they are written.
const (
	maxHostnameLength    = 253
	maxPathLength        = 1024
	maxHeaderNameLength  = 256
	maxHeaderValueLength = 4096
	maxQueryNameLength   = 256
	maxQueryValueLength  = 1024
	maxGRPCNameLength    = 1024
)

var (
	// hostnameRE is a lower-case DNS name, optionally with a leading wildcard label.
	hostnameRE = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// pathRE is an absolute URI path of RFC 3986 path characters, minus the
	// ones NGINX's configuration syntax gives meaning to (';', quotes, '$').
	pathRE = regexp.MustCompile(`^/[A-Za-z0-9._~!&()*+,=:@%/-]*$`)
	// headerNameRE: NGINX exposes request headers as $http_<name> with '-'
	// mapped to '_', and ignores headers with underscores by default, so only
	// letters, digits and '-' can be matched and set reliably.
	headerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)
	// queryNameRE: the Gateway API's header-name characters that are also
	// URI query characters NGINX's configuration takes safely.
	queryNameRE = regexp.MustCompile(`^[A-Za-z0-9._~!*+%-]+$`)
	// queryValueRE: URI query characters but '&' (which ends a parameter)
	// and '#'; a value is matched inside a regex (quoted with
	// regexp.QuoteMeta), so '$', ';' and '\'' are carried.
	queryValueRE = regexp.MustCompile(`^[A-Za-z0-9._~!*()+,:@%/?=$;'-]*$`)
)

const forbidden = "must not contain '{', '}', ';', quotes, '\\', '$', whitespace or control characters"

func lengthError(what string, n, limit int) error {
	return fmt.Errorf("%s is %d characters long, more than the %d the Gateway API allows", what, n, limit)
}

// valueLength checks that a value the Gateway API requires to be set (its
// minLength is 1) is not empty and fits its limit.
func valueLength(what, v string, limit int) error {
	switch {
	case v == "":
		return fmt.Errorf("%s must not be empty", what)
	case len(v) > limit:
		return lengthError(what, len(v), limit)
	}
	return nil
}

// Hostname checks a hostname (exact or with a leading "*." wildcard label).
func Hostname(h string) error {
	if len(h) > maxHostnameLength {
		return lengthError("hostname", len(h), maxHostnameLength)
	}
	if !hostnameRE.MatchString(h) {
		return fmt.Errorf("hostname %q must be a lower-case DNS name, optionally starting with a \"*.\" wildcard label", h)
	}
	// The Gateway API forbids IP addresses as hostnames (its pattern lets
	// IPv4 ones through); a TLS client never sends one as its server name.
	if _, err := netip.ParseAddr(strings.TrimPrefix(h, "*.")); err == nil {
		return fmt.Errorf("hostname %q is an IP address; the Gateway API allows DNS names only", h)
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

// RegexPath checks a RegularExpression path, as RegexValue checks the
// expressions of other matches (NGINX writes it in a quoted location).
func RegexPath(p string) error {
	if err := valueLength("regular expression path", p, maxPathLength); err != nil {
		return err
	}
	return RegexValue("regular expression path", p)
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

// HeaderValue checks an HTTP header value to match or set. Any text NGINX
// can send is carried: quotes, backslashes, ';', braces, spaces, '$' (a
// variable of syntax.ValueVariable's list, or a literal '$':
// syntax.HeaderValue) and UTF-8. Refused is what HTTP forbids in a field
// value (RFC 9110, section 5.5), which NGINX would send as it is: control
// characters (CR and LF end a header line, so they would add headers; NUL
// and the others are refused or cut by receivers; tab too, which HTTP
// allows inside a value but intermediaries fold into a space), and spaces
// at either end, which are no part of a value (a receiver strips them, and
// NGINX strips them from the request headers it matches). Text that is not
// UTF-8 is refused too: the API server stores strings as UTF-8.
func HeaderValue(v string) error {
	if err := valueLength("header value", v, maxHeaderValueLength); err != nil {
		return err
	}
	if err := fieldText("header value", v); err != nil {
		return err
	}
	if v[0] == ' ' || v[len(v)-1] == ' ' {
		return fmt.Errorf("header value %q starts or ends with a space, which HTTP does not count as part of a header value: the receiver would not get it", v)
	}
	return nil
}

// fieldText refuses text that is not UTF-8 or that holds a control
// character (C0, DEL or C1: U+0085 is a line break to some readers).
func fieldText(what, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s %q is not UTF-8 text", what, v)
	}
	for i, r := range v {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return fmt.Errorf("%s %q has a control character (%U) at byte %d; HTTP does not allow control characters in header values", what, v, r, i)
		}
	}
	return nil
}

// HeaderValueRegex checks a RegularExpression header value match.
func HeaderValueRegex(v string) error {
	if err := valueLength("header value", v, maxHeaderValueLength); err != nil {
		return err
	}
	return RegexValue("header value", v)
}

// RegexValue checks a regular expression of a match (what names it).
// NGINX writes it in double quotes, in a location or a map's key, where it
// interpolates nothing: quotes, backslashes, ';', braces (a quantifier such
// as {2} or {1,3}), spaces and '$' anywhere are carried. Refused: what is
// not printable ASCII (NGINX's PCRE2 matches bytes and RE2 UTF-8
// characters, so é+ or [é] would match differently; a control character
// never appears in a header value or a request line: write \xHH), what Go
// (RE2) and PCRE2 do not read the same way (pcreDifference), and what
// PCRE2 could backtrack through for a long time (backtracking).
func RegexValue(what, v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%s %q: only printable ASCII characters are allowed (byte %d is 0x%02x); write others as \\xHH escapes, for bytes", what, v, i, c)
		}
	}
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("%s %q does not compile: %w", what, v, err)
	}
	if err := pcreDifference(v); err != nil {
		return fmt.Errorf("%s %q: %w", what, v, err)
	}
	if err := backtracking(v); err != nil {
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
		return fmt.Errorf("query parameter name %q must use only letters, digits and the characters . _ ~ ! * + %% -; it %s", n, forbidden)
	}
	return nil
}

// QueryParamValue checks a query parameter value to match exactly.
func QueryParamValue(v string) error {
	if err := valueLength("query parameter value", v, maxQueryValueLength); err != nil {
		return err
	}
	if !queryValueRE.MatchString(v) {
		return fmt.Errorf("query parameter value %q must use only URI query characters; it %s", v, forbidden)
	}
	return nil
}

// QueryParamValueRegex checks a RegularExpression query parameter value match.
func QueryParamValueRegex(v string) error {
	if err := valueLength("query parameter value", v, maxQueryValueLength); err != nil {
		return err
	}
	return RegexValue("query parameter value", v)
}

var (
	// grpcServiceRE is the Gateway API's service pattern without its
	// optional leading '.', which no request path starts with.
	grpcServiceRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$`)
	grpcMethodRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z_0-9]*$`)
)

// GRPCService checks the service of an Exact gRPC method match.
func GRPCService(s string) error {
	if err := valueLength("gRPC service", s, maxGRPCNameLength); err != nil {
		return err
	}
	if !grpcServiceRE.MatchString(s) {
		return fmt.Errorf("gRPC service %q is not a valid service name", s)
	}
	return nil
}

// GRPCMethod checks the method of an Exact gRPC method match.
func GRPCMethod(m string) error {
	if err := valueLength("gRPC method", m, maxGRPCNameLength); err != nil {
		return err
	}
	if !grpcMethodRE.MatchString(m) {
		return fmt.Errorf("gRPC method %q is not a valid method name", m)
	}
	return nil
}

// GRPCRegex checks the service or method (what) of a RegularExpression
// gRPC method match.
func GRPCRegex(what, v string) error {
	if err := valueLength("gRPC "+what, v, maxGRPCNameLength); err != nil {
		return err
	}
	return RegexValue("gRPC "+what, v)
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

// Gateway API limits on the number of items of the lists Gatewall reads
// (their maxItems in its CRDs), re-checked because the API server can be
// bypassed: an object over one is refused, and its status never lists
// more than the API server can store.
const (
	MaxHostnames         = 16
	MaxTLSRouteHostnames = 1024
	MaxMatchHeaders      = 16
	MaxMatchQuery        = 16
	MaxHeaderChanges     = 16
	MaxCORSListItems     = 64
	MaxCORSMethods       = 9
	MaxListeners         = 64 // a Gateway's or a ListenerSet's, and their statuses'
	MaxAllowedKinds      = 8  // a listener's allowedRoutes.kinds
	MaxCertificateRefs   = 64 // a listener's tls.certificateRefs
	MaxTLSOptions        = 16 // a listener's tls.options
	MaxAddresses         = 16 // a Gateway's spec.addresses
	MaxFrontendPorts     = 64 // a Gateway's tls.frontend.perPort
	MaxFrontendCARefs    = 16 // a client certificate validation's caCertificateRefs
	MaxParentRefs        = 32 // a route's, and its status.parents
	MaxRules             = 16 // an HTTPRoute's or GRPCRoute's
	MaxRuleMatches       = 64
	MaxBackendRefs       = 16
	MaxFilters           = 16 // a rule's, and a backendRef's
	MaxGrantPeers        = 16 // a ReferenceGrant's from, and its to
	MaxPolicyTargets     = 16 // a BackendTLSPolicy's targetRefs
	MaxBackendTLSCARefs  = 8
	MaxConditions        = 8 // of any status
)

// ListLength checks the number of items of a list (what) against its
// Gateway API limit.
func ListLength(what string, n, limit int) error {
	if n > limit {
		return fmt.Errorf("%s has %d items, more than the %d the Gateway API allows", what, n, limit)
	}
	return nil
}
