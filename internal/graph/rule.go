package graph

// Rule is one rule of a route, validated and normalized.
type Rule struct {
	// Index is the position in spec.rules.
	Index int
	// Valid rules are configured; Err says why an invalid one is not.
	Valid bool
	Err   string
	// Matches are ORed; a rule without matches in the spec matches every path.
	Matches []Match
	Filters Filters
	// Backends with weight > 0 share the traffic by weight. Invalid backends
	// keep their share and answer 500, as the Gateway API requires.
	Backends []*Backend
	// Timeouts of the rule (HTTPRoute only).
	Timeouts Timeouts
	// Retry, when set, retries failed requests (HTTPRoute only).
	Retry *Retry
	// Notes say what of a valid rule NGINX does not do as asked; the
	// route's Accepted message carries them.
	Notes []string
	// H2C says the rule's backends speak HTTP/2 without TLS (gRPC, or an
	// HTTPRoute backend whose appProtocol is kubernetes.io/h2c): NGINX
	// passes to them with grpc_pass.
	H2C bool
	// TLS, when set, is how NGINX speaks TLS to every backend of the rule
	// (their BackendTLSPolicies agree).
	TLS *BackendTLS
}

// Path match types.
const (
	PathExact  = "Exact"
	PathPrefix = "PathPrefix"
	PathRegex  = "RegularExpression"
)

// Match is one way a request matches a rule; all its parts must match.
type Match struct {
	Path PathMatch
	// Method is an HTTP method to match, "" for any.
	Method  string
	Headers []ValueMatch
	Query   []ValueMatch
}

// PathMatch matches the request path. PathPrefix values have no trailing
// slash (except "/").
type PathMatch struct {
	Type  string
	Value string
}

// ValueMatch matches a header or query parameter by exact value or regex.
type ValueMatch struct {
	Name  string
	Value string
	Regex bool
}

// Filters are a rule's request and response processing.
type Filters struct {
	RequestHeaders  *HeaderModifier
	ResponseHeaders *HeaderModifier
	Redirect        *Redirect
	Rewrite         *Rewrite
	Mirrors         []*Mirror
	CORS            *CORS
	// Authentication, when set, authenticates the rule's requests (an
	// AuthenticationFilter named by an ExtensionRef).
	Authentication *Authentication
	// ExternalAuth, when set, asks an authorization service about each
	// request first (the Gateway API's ExternalAuth filter).
	ExternalAuth *ExternalAuth
	// Snippets are the SnippetsFilters the rule names, in the order it
	// names them; the renderer puts their snippets in the rule's
	// locations. Empty when the rule answers 500 for them (Error).
	Snippets []*FilterSnippets
	// Error, when set, says why the rule's requests are answered 500: a
	// filter that must process them cannot (an ExtensionRef that does not
	// resolve, an authentication the data plane cannot enforce, an
	// authorization service that does not resolve). The rule is never
	// served without it.
	Error string

	// extensionRefs are the rule's ExtensionRef filters, resolved with
	// the route's references (resolveFilters); notes are what the
	// filters' checks note of a valid rule.
	extensionRefs []extensionRef
	notes         []string
}

// HeaderModifier sets, adds and removes headers.
type HeaderModifier struct {
	Set    []Header
	Add    []Header
	Remove []string
}

// Header is a header name and value.
type Header struct {
	Name  string
	Value string
}

// PathModifier replaces the full path or the matched prefix.
type PathModifier struct {
	// ReplacePrefix is true for ReplacePrefixMatch, false for ReplaceFullPath.
	ReplacePrefix bool
	Value         string
}

// Redirect answers with a redirect; empty fields keep the request's value.
type Redirect struct {
	Scheme     string
	Hostname   string
	Port       int32
	Path       *PathModifier
	StatusCode int
}

// Rewrite changes the request before it is proxied.
type Rewrite struct {
	Hostname string
	Path     *PathModifier
}

// Mirror sends a copy of each request to a backend.
type Mirror struct {
	Backend *Backend
	// Basis is the share of requests copied, in hundredths of a percent
	// (10000: every request).
	Basis int
}

// Timeouts of an HTTPRoute rule, in NGINX time syntax ("10s"); "" when unset.
type Timeouts struct {
	Request        string
	BackendRequest string
}
