package graph

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/api/gateway/v1alpha1"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/internal/pki"
	"github.com/gatewall/gatewall/internal/validation"
)

// JWT authentication (AuthenticationFilter type JWT). NGINX Gateway Fabric
// has NGINX Plus's auth_jwt do it; Gatewall's data plane, NGINX OSS,
// verifies tokens with Gatewall's own Lua (package jwks says how). The
// graph checks what the filter asks: the key set of its Secret (source
// File: the key "auth", NGF's, a JSON Web Key Set, each key checked and
// the refused ones named), or the URL and CAs the data plane fetches one
// from (source Remote); the realm, leeway and keyCache; the claims its
// authorization requires (regular expressions PCRE and Go read alike, and
// that do not backtrack for long) and the headers claims are forwarded in.

// JWTSecretKey is the key of the Secret of a File source that holds the
// key set: NGINX Gateway Fabric reads it there, as Basic's htpasswd.
const JWTSecretKey = v1alpha1.BasicAuthSecretKey

// JWTAuth is JSON Web Token authentication, checked.
type JWTAuth struct {
	// Realm is the realm as the filter has it (validation.BearerRealm).
	Realm string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// Keys are a File source's keys, the key set of Secret, checked.
	Keys   *jwks.Set
	Secret types.NamespacedName
	// Remote is a Remote source: the set the data plane fetches.
	Remote *endpoints.KeySource
	// Authorization is what a token's claims must hold; nil: nothing.
	Authorization *jwks.Requirement
	// Headers are the claims forwarded to the backend, each in a header.
	Headers []ClaimHeader
}

// ClaimHeader is a claim forwarded in a request header.
type ClaimHeader struct {
	// Claim is the claim's name (nested names separated by "/").
	Claim string
	// Header is the header's name (validation.HeaderName).
	Header string
}

// resolveJWT checks a JWT filter; what it returns is the message of an
// invalid filter, or the authentication and what its Accepted message
// adds.
func resolveJWT(in *Input, f *v1alpha1.AuthenticationFilter) (*JWTAuth, string, string) {
	j := f.Spec.JWT
	out := &JWTAuth{Realm: j.Realm}
	if err := validation.BearerRealm(j.Realm); err != nil {
		return nil, "", fmt.Sprintf("spec.jwt.realm: %v", err)
	}
	if j.Leeway != nil {
		d, err := validation.ParseDuration(string(*j.Leeway))
		if err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.leeway: %v", err)
		}
		out.Leeway = d
	}
	var detail string
	if a := j.Authorization; a != nil {
		var err error
		if out.Authorization, out.Headers, err = jwtAuthorization(a); err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.authorization: %v", err)
		}
	}
	switch j.Source {
	case v1alpha1.JWTKeySourceFile:
		secret := key(f.Namespace, j.File.SecretRef.Name)
		if err := validation.ObjectReference(secret.Namespace, secret.Name); err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.file.secretRef: %v", err)
		}
		s := in.Secrets[secret]
		if s == nil {
			return nil, "", "spec.jwt.file.secretRef: " + in.missing("Secret", secret)
		}
		data, ok := s.Data[JWTSecretKey]
		if !ok {
			return nil, "", fmt.Sprintf("spec.jwt.file.secretRef: Secret %s has no key %q (the JSON Web Key Set)", secret, JWTSecretKey)
		}
		set, refused, err := jwks.Parse(data)
		if err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.file.secretRef: Secret %s key %q: %v", secret, JWTSecretKey, err)
		}
		out.Keys, out.Secret = &set, secret
		detail = fmt.Sprintf("Secret %s holds %d keys", secret, len(set.Keys))
		if len(refused) > 0 {
			detail += fmt.Sprintf("; refused (tokens signed with them are not let through): %s", strings.Join(refused, "; "))
		}
	case v1alpha1.JWTKeySourceRemote:
		src, note, msg := jwtRemote(in, f.Namespace, j)
		if msg != "" {
			return nil, "", msg
		}
		out.Remote = src
		detail = fmt.Sprintf("the data plane fetches the key set from %s every %s", src.URI, src.Refresh()) + note
	}
	return out, detail, ""
}

// jwtRemote checks a Remote source: its URL, its CAs (each Secret's
// ca.crt, as NGINX Gateway Fabric reads them, checked and re-encoded),
// and how often it is fetched.
func jwtRemote(in *Input, ns string, j *v1alpha1.JWTAuth) (*endpoints.KeySource, string, string) {
	src := &endpoints.KeySource{URI: j.Remote.URI}
	note := ""
	if j.KeyCache != nil {
		d, err := validation.ParseDuration(string(*j.KeyCache))
		if err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.keyCache: %v", err)
		}
		src.RefreshMillis = d.Milliseconds()
		if r := src.Refresh(); r != d {
			note = fmt.Sprintf(" (keyCache %s is taken as %s: a key set is fetched every %s to %s)", *j.KeyCache, r, endpoints.MinKeyRefresh, endpoints.MaxKeyRefresh)
		}
	}
	src.RefreshMillis = src.Refresh().Milliseconds()
	for _, ref := range j.Remote.CACertificateRefs {
		k := key(ns, ref.Name)
		if err := validation.ObjectReference(k.Namespace, k.Name); err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.remote.caCertificateRefs: %v", err)
		}
		pem, found := caData(in, "Secret", k)
		if !found {
			return nil, "", "spec.jwt.remote.caCertificateRefs: " + in.missing("Secret", k)
		}
		data, err := pki.ParseCABundle(pem)
		if err == nil && len(data) == 0 {
			err = fmt.Errorf("has no key %q", caCertKey)
		}
		if err != nil {
			return nil, "", fmt.Sprintf("spec.jwt.remote.caCertificateRefs: Secret %s key %s: %v", k, caCertKey, err)
		}
		src.CA += string(data)
	}
	if err := src.Check(); err != nil {
		return nil, "", fmt.Sprintf("spec.jwt.remote: %v", err)
	}
	return src, note, ""
}

// jwtAuthorization checks NGINX Gateway Fabric's authorization and turns
// it into the requirement the data plane checks, and the headers claims
// are forwarded in.
func jwtAuthorization(a *v1alpha1.Authorization) (*jwks.Requirement, []ClaimHeader, error) {
	req := &jwks.Requirement{All: a.Require != nil && *a.Require == v1alpha1.RequireTypeAll}
	var headers []ClaimHeader
	byHeader := map[string]string{}
	for i, r := range a.Rules {
		rule := jwks.Rule{All: r.Require != nil && *r.Require == v1alpha1.RequireTypeAll}
		for j, c := range r.Claims {
			where := fmt.Sprintf("rules[%d].claims[%d]", i, j)
			m := jwks.ClaimMatch{Path: jwks.ClaimPath(c.Name)}
			for _, p := range m.Path {
				if p == "" {
					return nil, nil, fmt.Errorf("%s.name %q: an empty name between slashes", where, c.Name)
				}
			}
			if c.Match == v1alpha1.ClaimMatchTypeRegex {
				for k, v := range c.Values {
					if err := validation.RegexValue("claim value", v); err != nil {
						return nil, nil, fmt.Errorf("%s.values[%d]: %w", where, k, err)
					}
				}
				m.Regex = jwks.AnchoredRegex(c.Values)
			} else {
				m.Exact = c.Values
			}
			rule.Claims = append(rule.Claims, m)
			if c.ProxySetHeader == nil {
				continue
			}
			h := *c.ProxySetHeader
			if err := validation.HeaderName(h); err != nil {
				return nil, nil, fmt.Errorf("%s.proxySetHeader: %w", where, err)
			}
			for _, r := range uncopiedHeaders {
				if strings.EqualFold(h, r) {
					return nil, nil, fmt.Errorf("%s.proxySetHeader: header %q is never set from a claim: it is %s", where, h, uncopiedWhy(r))
				}
			}
			lower := strings.ToLower(h)
			switch other, seen := byHeader[lower]; {
			case seen && other != c.Name:
				return nil, nil, fmt.Errorf("%s.proxySetHeader: header %q carries claim %q already", where, h, other)
			case seen:
				continue // the same claim of another rule
			}
			byHeader[lower] = c.Name
			headers = append(headers, ClaimHeader{Claim: c.Name, Header: h})
		}
		req.Rules = append(req.Rules, rule)
	}
	return req, headers, nil
}

// admitKeySources gives the remote key sets of routes' JWT filters the
// Gateway's room for them (endpoints.MaxKeySources: each is fetched by
// every pod and held by NGINX's dict of fixed size), routes oldest first,
// as endpoints are admitted: filters sharing a set share its room. A rule
// whose filter's set does not fit answers 500, and its route's
// ResolvedRefs says why; the others keep theirs.
func admitKeySources(routes []*Route) {
	admitted := map[string]bool{}
	byAge := append([]*Route(nil), routes...)
	sort.SliceStable(byAge, func(i, j int) bool { return Older(byAge[i].Source, byAge[j].Source) })
	for _, r := range byAge {
		if !r.attached() || r.resolved == nil {
			continue
		}
		refused := false
		for _, rule := range r.ValidRules() {
			a := rule.Filters.Authentication
			if a == nil || a.JWT == nil || a.JWT.Remote == nil || rule.Filters.Error != "" {
				continue
			}
			id := a.JWT.Remote.ID()
			if admitted[id] || len(admitted) < endpoints.MaxKeySources {
				admitted[id] = true
				continue
			}
			msg := fmt.Sprintf("%s: its key set %s is not fetched: the Gateway's data plane holds %d remote key sets, which older routes' filters take",
				a.Filter.Key, a.JWT.Remote.URI, endpoints.MaxKeySources)
			rule.Filters.fail(msg)
			r.resolved.addFilter(RouteReasonInvalidFilter, fmt.Sprintf("spec.rules[%d]: %s (the rule answers 500)", rule.Index, msg))
			refused = true
		}
		if refused {
			r.resolveAgain()
		}
	}
}

// claimHeaderConflict says which header a rule's JWT filter forwards a
// claim in that its ExternalAuth also copies from the authorization
// service's answer ("" when none): both would be sent.
func claimHeaderConflict(f *Filters) string {
	if f.Authentication == nil || f.Authentication.JWT == nil || f.ExternalAuth == nil {
		return ""
	}
	for _, h := range f.Authentication.JWT.Headers {
		if containsFold(f.ExternalAuth.ResponseHeaders, h.Header) {
			return h.Header
		}
	}
	return ""
}
