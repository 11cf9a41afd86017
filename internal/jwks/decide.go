package jwks

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"hash"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The bounds of a request's token, which jwt.lua checks before it decodes
// anything: what NGINX already read is bounded by its header buffers, what
// is decoded and verified by these.
const (
	// MaxAuthorizationBytes bounds the Authorization header's value.
	MaxAuthorizationBytes = 8192
	// MaxHeaderSegment bounds a token's JOSE header, as base64url.
	MaxHeaderSegment = 2048
	// MaxJSONDepth bounds the nesting of a token's JSON.
	MaxJSONDepth = 16
	// MaxTries bounds the keys a signature is checked with.
	MaxTries = 4
	// MaxClaimHeaderBytes bounds a claim's value forwarded in a header.
	MaxClaimHeaderBytes = 4096
)

// Verdict is what the data plane does with a request.
type Verdict struct {
	// Status is 200 (let through), 401 (no token, an invalid one, or
	// claims that do not satisfy the authorization), 503 (a remote key
	// set not there yet) or 500.
	Status int
	// Challenge is the WWW-Authenticate header of a 401.
	Challenge string
	// Reason says why a request is refused, for logs.
	Reason string
	// Headers are the forwarded claims' values by variable ("" when a
	// token lacks the claim: the header is not sent).
	Headers map[string]string
}

// Decide decides a request carrying authorization (its Authorization
// header, "" without one) as jwt.lua does, at now: p is the filter's
// policy, remote its remote key set (nil: not fetched yet).
func Decide(authorization string, p *Policy, remote *Set, now time.Time) Verdict {
	challenge := `Bearer realm="` + realmValue(p.Realm) + `"`
	refuse := func(reason string) Verdict {
		return Verdict{Status: 401, Challenge: challenge + `, error="invalid_token"`, Reason: reason}
	}
	auth := strings.Trim(authorization, " \t")
	if len(auth) > MaxAuthorizationBytes {
		return refuse("the Authorization header is too long")
	}
	if len(auth) < 7 || !strings.EqualFold(auth[:6], "bearer") || auth[6] != ' ' {
		return Verdict{Status: 401, Challenge: challenge, Reason: "no bearer token"}
	}
	token := strings.TrimLeft(auth[7:], " ")
	parts := strings.Split(token, ".")
	if len(parts) != 3 || !segmentRE.MatchString(parts[0]) || !segmentRE.MatchString(parts[1]) || !segmentRE.MatchString(parts[2]) {
		return refuse("not a signed token (three base64url parts)")
	}
	if len(parts[0]) > MaxHeaderSegment {
		return refuse("the token's header is too long")
	}
	head, ok1 := b64url(parts[0])
	body, ok2 := b64url(parts[1])
	sig, ok3 := b64url(parts[2])
	if !ok1 || !ok2 || !ok3 {
		return refuse("malformed base64url")
	}
	h, ok := object(head)
	if !ok {
		return refuse("the token's header is not a JSON object")
	}
	alg, _ := h["alg"].(string)
	def, known := algorithms[alg]
	if !known {
		return refuse("alg is not one Gatewall verifies")
	}
	if _, ok := h["crit"]; ok {
		return refuse("the token has critical header parameters")
	}
	kid := ""
	if v, ok := h["kid"]; ok {
		s, isString := v.(string)
		if !isString || s == "" || len(s) > MaxKidBytes {
			return refuse("kid is not a string of 1 to 256 bytes")
		}
		kid = s
	}
	claims, ok := object(body)
	if !ok {
		return refuse("the token's claims are not a JSON object")
	}
	keys := p.Keys
	if keys == nil {
		keys = remote
	}
	if keys == nil {
		return Verdict{Status: 503, Reason: "the key set has not been fetched yet"}
	}
	input := []byte(parts[0] + "." + parts[1])
	verified := false
	for _, k := range candidates(keys, alg, kid) {
		if verify(k, alg, def.size, input, sig) {
			verified = true
			break
		}
	}
	if !verified {
		return refuse("no key verifies the signature")
	}
	leeway := float64(p.LeewayMillis) / 1000
	t := float64(now.UnixMilli()) / 1000
	for _, c := range []struct {
		name string
		bad  func(v float64) bool
	}{
		{"exp", func(v float64) bool { return t >= v+leeway }},
		{"nbf", func(v float64) bool { return t+leeway < v }},
		{"iat", func(v float64) bool { return v > t+leeway }},
	} {
		v, present := claims[c.name]
		if !present {
			continue
		}
		if f, isNumber := v.(float64); !isNumber || c.bad(f) {
			return refuse(c.name + " is not a number or not within its time")
		}
	}
	if a := p.Authorization; a != nil && !a.satisfied(claims) {
		return Verdict{Status: 401, Challenge: challenge + `, error="insufficient_scope"`, Reason: "the claims do not satisfy the authorization"}
	}
	headers := map[string]string{}
	for _, hd := range p.Headers {
		v := strings.Join(elements(lookup(claims, hd.Path)), ",")
		if len(v) > MaxClaimHeaderBytes || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return refuse("a claim to forward holds a control character or is too long")
		}
		headers[hd.Variable] = v
	}
	return Verdict{Status: 200, Headers: headers}
}

var segmentRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// b64url decodes base64url strictly: no padding, and only the canonical
// form of each value (the unused bits of the last character zero), so
// that a token has one spelling.
func b64url(s string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return b, err == nil
}

// realmValue escapes a realm for the header's quoted string.
func realmValue(realm string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(realm)
}

// candidates are the keys a token's signature is checked with, at most
// MaxTries: those of its kid (with none of the set's keys having it, the
// keys without a kid), or without a kid any, of those that verify alg.
func candidates(s *Set, alg, kid string) []Key {
	byKid := false
	if kid != "" {
		for _, k := range s.Keys {
			byKid = byKid || k.Kid == kid
		}
	}
	var out []Key
	for _, k := range s.Keys {
		if len(out) == MaxTries {
			break
		}
		if kid != "" && (byKid && k.Kid != kid || !byKid && k.Kid != "") {
			continue
		}
		if slices.Contains(k.Algs, alg) {
			out = append(out, k)
		}
	}
	return out
}

// verify checks a signature with one key.
func verify(k Key, alg string, size int, input, sig []byte) bool {
	var h func() hash.Hash
	var id crypto.Hash
	switch size {
	case 32:
		h, id = sha256.New, crypto.SHA256
	case 48:
		h, id = sha512.New384, crypto.SHA384
	default:
		h, id = sha512.New, crypto.SHA512
	}
	if k.Type == TypeOct {
		m := hmac.New(h, k.Secret)
		m.Write(input)
		return hmac.Equal(m.Sum(nil), sig)
	}
	d := h()
	d.Write(input)
	digest := d.Sum(nil)
	pub, err := x509.ParsePKIXPublicKey(k.DER)
	if err != nil {
		return false
	}
	switch key := pub.(type) {
	case *rsa.PublicKey:
		if alg[0] == 'P' {
			return rsa.VerifyPSS(key, id, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}) == nil
		}
		return rsa.VerifyPKCS1v15(key, id, digest, sig) == nil
	case *ecdsa.PublicKey:
		n := (key.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
		return ecdsa.Verify(key, digest, r, s)
	}
	return false
}

// object decodes a token part that must be a JSON object, as jwt.lua
// does: valid UTF-8, an object, nested at most MaxJSONDepth deep.
func object(data []byte) (map[string]any, bool) {
	if !utf8.Valid(data) {
		return nil, false
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, false
	}
	v, ok := decodeJSON(data)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// lookup finds a claim by its path in nested objects; nil when absent.
func lookup(claims map[string]any, path []string) any {
	var v any = claims
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// elements are a claim's values as text: a string, a number (as Lua's
// "%.14g" writes it), a boolean, or an array's elements that are such;
// nothing for an object or null.
func elements(v any) []string {
	if a, ok := v.([]any); ok {
		var out []string
		for _, e := range a {
			if s, ok := scalar(e); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if s, ok := scalar(v); ok {
		return []string{s}
	}
	return nil
}

// satisfied says whether claims satisfy the requirement.
func (r *Requirement) satisfied(claims map[string]any) bool {
	return all(r.All, len(r.Rules), func(i int) bool {
		rule := r.Rules[i]
		return all(rule.All, len(rule.Claims), func(j int) bool { return rule.Claims[j].matches(claims) })
	})
}

// all is every(n, f) when every, else any.
func all(every bool, n int, f func(int) bool) bool {
	for i := range n {
		if f(i) != every {
			return !every
		}
	}
	return every
}

func (c ClaimMatch) matches(claims map[string]any) bool {
	var re *regexp.Regexp
	if c.Regex != "" {
		var err error
		if re, err = regexp.Compile(c.Regex); err != nil {
			return false
		}
	}
	for _, e := range elements(lookup(claims, c.Path)) {
		if slices.Contains(c.Exact, e) || re != nil && re.MatchString(e) {
			return true
		}
	}
	return false
}
