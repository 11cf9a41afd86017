// Package validation re-checks, in Go, every rule the API server enforces on
// Gatewall's own resources (their CRD schemas and CEL rules), plus the checks a
// value needs before it may reach nginx.conf: what no encoding makes safe
// is refused, what package syntax can write safely is carried (header
// values with quotes, ';', braces and '$'; syntax.HeaderValue). The API server's rules can be
// bypassed (an older CRD, a direct etcd write), so controllers call these
// functions on everything they read.
//
// Regular expressions are refused when NGINX's backtracking PCRE2 could
// spend a long time on one request (redos.go): exponential backtracking
// (a repeated part that matches one text several ways, (a+)+), a repeated
// part that can match nothing ((a?){30}), polynomial backtracking of
// degree 3 or more (.*a.*a.*a), and bounded repetition that multiplies
// the ways to match one text ((a|aa){1,200}, ((a|a){5}){4}:
// redos_bounded.go); other quantifiers, {2,} or {1,3}, are carried, as
// are quotes, ';', braces and '$' in a regex, which NGINX writes quoted
// and does not interpolate. NGINX 1.22 offers no directive to bound
// PCRE2's work, and a bound written into the pattern ((*LIMIT_MATCH=n))
// would also fail slow but legitimate matches, so the expressions are
// refused instead, with the reason in the route's status. Degree 2
// (^/api/.*/v1/.*$) stays accepted: PCRE2's default match limit ends it
// within tens of milliseconds on the longest request line NGINX reads.
//
// A listener's tls.options (NGINX Gateway Fabric's keys, tlsoptions.go)
// are held to what NGINX 1.22 and OpenSSL 3.0 on the data plane accept
// and use: cipher strings are read as OpenSSL reads them, with its
// vocabulary embedded as data taken from the data plane's own OpenSSL
// (ciphers.go), so an element OpenSSL would silently ignore is refused.
//
// Messages match the API server's where a rule exists in both places, so users
// see the same words whichever layer stopped them.
//
// The package is pure: no I/O, no clients, no logging.
package validation
