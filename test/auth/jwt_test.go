package auth

import (
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/internal/jwks"
	"github.com/gatewall/gatewall/test/jwttest"
)

// jwtKeys are an identity provider's keys, one of each kind Gatewall
// verifies with, and one key of the same kinds the Gateway does not know.
type jwtKeys struct {
	rsa, p256, p384, hs jwttest.Key
	stranger            jwttest.Key
}

func newJWTKeys() jwtKeys {
	return jwtKeys{rsa: jwttest.RSA("rsa", 2048), p256: jwttest.EC("p256", elliptic.P256()), p384: jwttest.EC("p384", elliptic.P384()),
		hs: jwttest.HMAC("hs", 64), stranger: jwttest.RSA("rsa", 2048)}
}

func (k jwtKeys) set() []jwttest.Key { return []jwttest.Key{k.rsa, k.p256, k.p384, k.hs} }

func (k jwtKeys) forAlg(alg string) jwttest.Key {
	switch {
	case alg == "ES256":
		return k.p256
	case alg == "ES384":
		return k.p384
	case alg[:2] == "HS":
		return k.hs
	}
	return k.rsa
}

// jwtRoutes: /jwt verifies tokens with the Secret's key set (a 30 s
// leeway); /claims also requires claims (NGINX Gateway Fabric's rules:
// every rule, any claim of the first, all of the second) and forwards two;
// /tenant does as /claims for requests with a header, which NGINX reaches
// through an internal location (a rewrite); /open authenticates nothing.
func jwtRoutes(set []byte) string {
	return gateway + `
---
apiVersion: v1
kind: Secret
metadata: {name: jwks, namespace: ns}
type: Opaque
data: {auth: ` + base64.StdEncoding.EncodeToString(set) + `}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: jwt, namespace: ns}
spec:
  type: JWT
  jwt: {realm: 'API "v1" \ staff', source: File, file: {secretRef: {name: jwks}}, leeway: 30s}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: AuthenticationFilter
metadata: {name: claims, namespace: ns}
spec:
  type: JWT
  jwt:
    realm: claims
    source: File
    file: {secretRef: {name: jwks}}
    authorization:
      require: All
      rules:
      - require: Any
        claims:
        - {name: role, values: [admin, editor]}
        - {name: realm_access/roles, values: [ops]}
      - require: All
        claims:
        - {name: email, match: Regex, values: ['.*@example\.com']}
        - {name: sub, values: [alice, bob], proxySetHeader: X-JWT-Sub}
        - {name: groups, match: Regex, values: ['team-.*'], proxySetHeader: X-JWT-Groups}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /jwt}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: jwt}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /claims}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: claims}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /open}}]
    backendRefs: [{name: app, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /tenant}, headers: [{name: X-Tenant, value: a}]}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.nginx.org, kind: AuthenticationFilter, name: claims}}]
    backendRefs: [{name: app, port: 80}]
`
}

func bearer(path, token string) *http.Request {
	return request("GET", path, "", "Authorization", "Bearer "+token)
}

// valid are claims valid now; set overrides them (nil removes).
func valid(set map[string]any) map[string]any {
	c := map[string]any{"sub": "alice", "exp": time.Now().Unix() + 300, "iat": time.Now().Unix()}
	for k, v := range set {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// authorized are claims /claims lets through.
func authorized(set map[string]any) map[string]any {
	c := valid(map[string]any{"role": "editor", "email": "alice@example.com", "groups": []any{"team-a", "staff"}})
	for k, v := range set {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// TestJWT: a real NGINX lets a token of every algorithm through, signed
// by a key of the Secret's set; it refuses, with 401 and the realm, what
// an attacker or a broken client sends; and /claims forwards the claims a
// token holds, in place of the client's own headers.
func TestJWT(t *testing.T) {
	keys := newJWTKeys()
	files, ids := renderGateway(t, jwtRoutes(jwttest.JWKS(keys.set())))
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	d.endpoints(map[string][]string{"app": {app.addr}})

	for _, alg := range jwks.Algorithms() {
		tok := jwttest.Token{Alg: alg, Key: keys.forAlg(alg), Claims: valid(nil)}.Sign()
		if resp, body := d.do(bearer("/jwt/x", tok)); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", alg, resp.StatusCode, body)
		}
	}
	if got := len(app.requests()); got != len(jwks.Algorithms()) {
		t.Errorf("the backend got %d requests, want %d", got, len(jwks.Algorithms()))
	}

	good := jwttest.Token{Alg: "RS256", Key: keys.rsa, Claims: valid(nil)}.Sign()
	parts := strings.Split(good, ".")
	b64 := func(s string) string { return jwttest.B64([]byte(s)) }
	claims := b64(`{"sub":"alice"}`)
	flipped := []byte(parts[2])
	flipped[5] ^= 1
	const challenge = `Bearer realm="API \"v1\" \\ staff"`
	refused := map[string]string{
		"a tampered signature":          parts[0] + "." + parts[1] + "." + string(flipped),
		"tampered claims":               parts[0] + "." + b64(`{"sub":"admin"}`) + "." + parts[2],
		"alg none":                      b64(`{"alg":"none"}`) + "." + claims + ".",
		"alg none, a signature":         b64(`{"alg":"none"}`) + "." + claims + "." + parts[2],
		"HS256 with the RSA key (DER)":  jwttest.Token{Alg: "HS256", Key: jwttest.Key{Kid: "rsa", Secret: keys.rsa.PublicDER()}, Claims: valid(nil)}.Sign(),
		"HS256 with the RSA key (PEM)":  jwttest.Token{Alg: "HS256", Key: jwttest.Key{Kid: "rsa", Secret: keys.rsa.PublicPEM()}, Claims: valid(nil)}.Sign(),
		"HS256 with the EC key, no kid": jwttest.Token{Alg: "HS256", Key: jwttest.Key{Secret: keys.p256.PublicDER()}, Claims: valid(nil)}.Sign(),
		"RS256 signed with the HMAC":    jwttest.SignRaw("HS256", keys.hs, b64(`{"alg":"RS256","kid":"rsa"}`)+"."+claims),
		"ES256 by the P-384 key":        jwttest.Token{Alg: "ES384", Key: keys.p384, Header: map[string]any{"alg": "ES256", "kid": "p256"}, Claims: valid(nil)}.Sign(),
		"expired past the leeway":       jwttest.Token{Alg: "ES256", Key: keys.p256, Claims: valid(map[string]any{"exp": time.Now().Unix() - 40})}.Sign(),
		"not yet valid":                 jwttest.Token{Alg: "ES256", Key: keys.p256, Claims: valid(map[string]any{"nbf": time.Now().Unix() + 60})}.Sign(),
		"issued in the future":          jwttest.Token{Alg: "ES256", Key: keys.p256, Claims: valid(map[string]any{"iat": time.Now().Unix() + 60})}.Sign(),
		"exp not a number":              jwttest.Token{Alg: "ES256", Key: keys.p256, Claims: valid(map[string]any{"exp": "tomorrow"})}.Sign(),
		"an unknown kid":                jwttest.Token{Alg: "RS256", Key: keys.rsa, Header: map[string]any{"kid": "rotated-away"}, Claims: valid(nil)}.Sign(),
		"a stranger's key, a known kid": jwttest.Token{Alg: "RS256", Key: keys.stranger, Claims: valid(nil)}.Sign(),
		"crit":                          jwttest.Token{Alg: "RS256", Key: keys.rsa, Header: map[string]any{"crit": []string{"exp"}}, Claims: valid(nil)}.Sign(),
		"an oversized header":           jwttest.Token{Alg: "RS256", Key: keys.rsa, Header: map[string]any{"x": strings.Repeat("x", jwks.MaxHeaderSegment)}, Claims: valid(nil)}.Sign(),
		"padded base64url":              parts[0] + "=." + parts[1] + "." + parts[2],
		"standard base64":               parts[0] + "." + parts[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+/",
		"a non-canonical character":     parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-1] + nonCanonical(parts[2][len(parts[2])-1]),
		"a JWE (five parts)":            good + ".a.b",
		"claims that are not JSON":      jwttest.SignRaw("RS256", keys.rsa, parts[0]+"."+b64(`sub=alice`)),
		"claims not UTF-8":              jwttest.SignRaw("RS256", keys.rsa, parts[0]+"."+b64("{\"sub\":\"\xff\"}")),
		"claims nested too deep":        jwttest.SignRaw("RS256", keys.rsa, parts[0]+"."+b64(strings.Repeat(`{"a":`, 20)+"1"+strings.Repeat("}", 20))),
	}
	for name, tok := range refused {
		resp, body := d.do(bearer("/jwt/x", tok))
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != challenge+`, error="invalid_token"` {
			t.Errorf("%s: %d %q %s, want 401 invalid_token", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	for name, auth := range map[string]string{"no Authorization": "", "Basic": "Basic YWxpY2U6cHc=", "Bearer without a token": "Bearer "} {
		r := request("GET", "/jwt/x", "")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		if resp, _ := d.do(r); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != challenge {
			t.Errorf("%s: %d %q, want 401 with the bare challenge", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// NGINX refuses a header line over its 8 KiB buffer before any Lua
	// runs; jwks.MaxAuthorizationBytes is the bound past it.
	huge := jwttest.Token{Alg: "RS256", Key: keys.rsa, Claims: valid(map[string]any{"x": strings.Repeat("x", jwks.MaxAuthorizationBytes)})}.Sign()
	if resp, _ := d.do(bearer("/jwt/x", huge)); resp.StatusCode != 400 {
		t.Errorf("an oversized token: %d, want 400 (NGINX's header buffer)", resp.StatusCode)
	}
	// NGINX refuses a request with two (400): which would it verify?
	twice := bearer("/jwt/x", good)
	twice.Header.Add("Authorization", "Bearer "+refused["alg none"])
	if resp, _ := d.do(twice); resp.StatusCode != 400 {
		t.Errorf("two Authorization headers: %d, want 400", resp.StatusCode)
	}
	if got := app.requests(); len(got) != 0 {
		t.Errorf("the backend got %d refused requests: %v", len(got), got)
	}
	within := jwttest.Token{Alg: "PS512", Key: keys.rsa, Claims: valid(map[string]any{"exp": time.Now().Unix() - 10})}.Sign()
	if resp, _ := d.do(bearer("/jwt/x", within)); resp.StatusCode != 200 {
		t.Errorf("expired within the leeway: %d", resp.StatusCode)
	}
	if resp, _ := d.do(request("GET", "/open/x", "")); resp.StatusCode != 200 {
		t.Errorf("/open: %d", resp.StatusCode)
	}
}

// nonCanonical spells a token part's last character with its lowest bit
// set, which base64url decoding drops when the canonical spelling has it
// clear: the same bytes, spelled otherwise.
func nonCanonical(c byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	return string(alphabet[strings.IndexByte(alphabet, c)|1])
}

// TestJWTClaims: NGINX Gateway Fabric's authorization rules (a token that
// does not satisfy them is 401 insufficient_scope, as NGF's auth_jwt_require
// answers), and the forwarded claims, which replace the client's own headers
// of their names; a claim a header cannot carry refuses the request.
func TestJWTClaims(t *testing.T) {
	keys := newJWTKeys()
	files, ids := renderGateway(t, jwtRoutes(jwttest.JWKS(keys.set())))
	d := start(t, files, ids)
	app := d.server("127.0.0.2", nil)
	d.endpoints(map[string][]string{"app": {app.addr}})
	for name, tc := range map[string]struct {
		claims map[string]any
		status int
	}{
		"every rule":                  {authorized(nil), 200},
		"the role in an array":        {authorized(map[string]any{"role": []any{"viewer", "admin"}}), 200},
		"the other claim of rule 1":   {authorized(map[string]any{"role": nil, "realm_access": map[string]any{"roles": []any{"ops"}}}), 200},
		"a wrong role":                {authorized(map[string]any{"role": "viewer"}), 401},
		"no role":                     {authorized(map[string]any{"role": nil}), 401},
		"a role that is an object":    {authorized(map[string]any{"role": map[string]any{"admin": true}}), 401},
		"another domain":              {authorized(map[string]any{"email": "alice@example.com.evil.io"}), 401},
		"no email":                    {authorized(map[string]any{"email": nil}), 401},
		"a wrong sub":                 {authorized(map[string]any{"sub": "mallory"}), 401},
		"no group of a team":          {authorized(map[string]any{"groups": []any{"staff"}}), 401},
		"a line break in a forwarded": {authorized(map[string]any{"sub": "alice", "groups": []any{"team-a\r\nX-Admin: yes"}}), 401},
	} {
		tok := jwttest.Token{Alg: "ES384", Key: keys.p384, Claims: tc.claims}.Sign()
		resp, body := d.do(bearer("/claims/x", tok))
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, body, tc.status)
		}
		if tc.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer realm="claims", error=`) {
			t.Errorf("%s: %q", name, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// A rule reached through an internal location (its match is a
	// header's) authenticates as well.
	good := jwttest.Token{Alg: "ES384", Key: keys.p384, Claims: authorized(nil)}.Sign()
	for _, tc := range []struct {
		token  string
		status int
	}{{good, 200}, {"", 401}, {jwttest.Token{Alg: "ES384", Key: keys.p384, Claims: authorized(map[string]any{"role": "x"})}.Sign(), 401}} {
		r := request("GET", "/tenant/x", "", "X-Tenant", "a")
		if tc.token != "" {
			r.Header.Set("Authorization", "Bearer "+tc.token)
		}
		if resp, _ := d.do(r); resp.StatusCode != tc.status {
			t.Errorf("/tenant with X-Tenant, token %.10q: %d, want %d", tc.token, resp.StatusCode, tc.status)
		}
	}
	wrongRole := jwttest.Token{Alg: "ES384", Key: keys.p384, Claims: authorized(map[string]any{"role": "viewer"})}.Sign()
	if resp, _ := d.do(bearer("/claims/x", wrongRole)); resp.Header.Get("WWW-Authenticate") != `Bearer realm="claims", error="insufficient_scope"` {
		t.Errorf("a token not authorized: %q", resp.Header.Get("WWW-Authenticate"))
	}
	app.requests()
	tok := jwttest.Token{Alg: "HS384", Key: keys.hs, Claims: authorized(nil)}.Sign()
	r := bearer("/claims/x", tok)
	r.Header.Set("X-JWT-Sub", "forged")
	r.Header.Set("X-JWT-Groups", "admins")
	if resp, body := d.do(r); resp.StatusCode != 200 {
		t.Fatalf("an authorized token: %d %s", resp.StatusCode, body)
	}
	got := app.requests()
	if len(got) != 1 || got[0].Header.Values("X-JWT-Sub")[0] != "alice" || len(got[0].Header.Values("X-JWT-Sub")) != 1 ||
		got[0].Header.Get("X-JWT-Groups") != "team-a,staff" {
		var h any
		if len(got) == 1 {
			h = got[0].Header
		}
		t.Errorf("the backend got %v, want X-JWT-Sub alice and X-JWT-Groups team-a,staff, not the client's", h)
	}
	data, _ := json.Marshal(got)
	if strings.Contains(string(data), "forged") {
		t.Errorf("the client's forged header reached the backend: %s", data)
	}
}
