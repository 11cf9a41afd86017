package jwks

import (
	"encoding/json"
	"strings"
)

// Policy is what one AuthenticationFilter of type JWT asks of a request's
// token, as jwt.lua reads it from the data-plane file of a configuration's
// policies (Policies): nothing in it is code.
type Policy struct {
	// Realm is the filter's realm, named in the WWW-Authenticate header of
	// a 401 answer.
	Realm string `json:"realm"`
	// LeewayMillis is the clock skew allowed on exp, nbf and iat.
	LeewayMillis int64 `json:"leewayMillis,omitempty"`
	// Keys are a File source's keys; KeySet names a Remote source's set,
	// which the data plane fetches and keeps in a shared dict (until it
	// has it, requests are answered 503).
	Keys   *Set   `json:"keys,omitempty"`
	KeySet string `json:"keySet,omitempty"`
	// Authorization is what the token's claims must hold; nil: nothing.
	Authorization *Requirement `json:"authorization,omitempty"`
	// Headers are the claims forwarded to the backend: each claim's value
	// is set into an NGINX variable, which a request header carries.
	Headers []Header `json:"headers,omitempty"`
}

// Requirement is NGINX Gateway Fabric's authorization: rules of which all
// must hold, or any one.
type Requirement struct {
	All   bool   `json:"all,omitempty"`
	Rules []Rule `json:"rules"`
}

// Rule is a set of claims of which all must match, or any one.
type Rule struct {
	All    bool         `json:"all,omitempty"`
	Claims []ClaimMatch `json:"claims"`
}

// ClaimMatch is a claim and the values it may have. A claim's values are
// its value, or an array's elements (NGINX Plus's auth_jwt_claim_set gives
// an array as its elements joined by commas, which NGINX Gateway Fabric
// matches element by element); one that equals one of Exact, or that
// Regex matches whole, is enough.
type ClaimMatch struct {
	// Path is the claim's name, nested names for a claim inside objects
	// (NGINX Gateway Fabric's "realm_access/roles").
	Path  []string `json:"path"`
	Exact []string `json:"exact,omitempty"`
	// Regex is anchored at both ends (AnchoredRegex): PCRE matches it in
	// NGINX, Go's regexp in Decide; both read the expressions validation
	// accepts the same way.
	Regex string `json:"regex,omitempty"`
}

// Header is a claim forwarded to the backend.
type Header struct {
	Path []string `json:"path"`
	// Variable is the NGINX variable (without "$") the claim's value is
	// set into.
	Variable string `json:"var"`
}

// ClaimPath is a claim name as NGINX Gateway Fabric writes it: "/"
// separates the names of nested objects.
func ClaimPath(name string) []string { return strings.Split(name, "/") }

// AnchoredRegex is the one expression matching a value whole when one of
// the regular expressions matches it whole.
func AnchoredRegex(values []string) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = "(?:" + v + ")"
	}
	return "^(?:" + strings.Join(parts, "|") + ")$"
}

// Policies are a configuration's policies by filter ID (32 hex digits),
// the file jwt.lua loads when NGINX loads the configuration.
type Policies map[string]Policy

// Encode is the policies' file: JSON, its keys sorted.
func (p Policies) Encode() []byte {
	data, err := json.Marshal(struct {
		Filters Policies `json:"filters"`
	}{p})
	if err != nil {
		panic("jwks: policies do not encode: " + err.Error())
	}
	return append(data, '\n')
}
