package jwks

import (
	"crypto/elliptic"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/gatewall/gatewall/test/jwttest"
)

// now is the tests' time; tokens are valid around it.
var now = time.Unix(1_800_000_000, 0)

// fixture is a key set of every kind of key and a policy verifying with it.
type fixture struct {
	rsa, p256, p384, hs jwttest.Key
	set                 Set
}

func newFixture(t testing.TB) fixture {
	f := fixture{rsa: keysOf.rsa2048, p256: keysOf.p256, p384: keysOf.p384, hs: jwttest.HMAC("h", 64)}
	set, refused, err := Parse(jwttest.JWKS([]jwttest.Key{f.rsa, f.p256, f.p384, f.hs}))
	if err != nil || len(refused) > 0 {
		t.Fatal(refused, err)
	}
	f.set = set
	return f
}

func (f fixture) keyFor(alg string) jwttest.Key {
	switch alg[:2] {
	case "RS", "PS":
		return f.rsa
	case "HS":
		return f.hs
	}
	if alg == "ES256" {
		return f.p256
	}
	return f.p384
}

// token signs claims (valid ones by default) with alg's key of the fixture.
func (f fixture) token(alg string, claims map[string]any) string {
	if claims == nil {
		claims = map[string]any{"sub": "alice", "exp": now.Unix() + 60}
	}
	return jwttest.Token{Alg: alg, Key: f.keyFor(alg), Claims: claims}.Sign()
}

func bearer(token string) string { return "Bearer " + token }

// TestDecideAlgorithms: a valid token of every algorithm is let through,
// in the scheme's every case.
func TestDecideAlgorithms(t *testing.T) {
	f := newFixture(t)
	p := &Policy{Realm: "api", Keys: &f.set}
	for _, alg := range Algorithms() {
		if v := Decide(bearer(f.token(alg, nil)), p, nil, now); v.Status != 200 {
			t.Errorf("%s: %+v", alg, v)
		}
	}
	if v := Decide("bEaReR  "+f.token("RS256", nil), p, nil, now); v.Status != 200 {
		t.Errorf("the scheme in another case, two spaces: %+v", v)
	}
}

// TestDecideRefusals: what an attacker or a broken client sends is
// refused with 401 and the realm; a challenge without error when no token
// was offered.
func TestDecideRefusals(t *testing.T) {
	f := newFixture(t)
	p := &Policy{Realm: `a "quoted" realm`, Keys: &f.set}
	valid := f.token("RS256", nil)
	parts := strings.Split(valid, ".")
	header := func(h string) string { return jwttest.B64([]byte(h)) }
	claims := jwttest.B64([]byte(`{"sub":"alice"}`))
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	deep := strings.Repeat(`{"a":`, MaxJSONDepth) + "1" + strings.Repeat("}", MaxJSONDepth)
	cases := map[string]string{
		"a tampered signature":             parts[0] + "." + parts[1] + "." + flip(parts[2], 10),
		"a tampered payload":               parts[0] + "." + flip(parts[1], 5) + "." + parts[2],
		"no signature":                     parts[0] + "." + parts[1] + ".",
		"alg none":                         header(`{"alg":"none"}`) + "." + claims + ".",
		"alg none, with a signature":       header(`{"alg":"none"}`) + "." + claims + "." + parts[2],
		"alg None":                         jwttest.SignRaw("HS256", f.hs, header(`{"alg":"None"}`)+"."+claims),
		"HS256 with the RSA key (DER)":     jwttest.Token{Alg: "HS256", Key: jwttest.Key{Kid: "r", Secret: f.rsa.PublicDER()}, Claims: map[string]any{"sub": "x"}}.Sign(),
		"HS256 with the RSA key (PEM)":     jwttest.Token{Alg: "HS256", Key: jwttest.Key{Kid: "r", Secret: f.rsa.PublicPEM()}, Claims: map[string]any{"sub": "x"}}.Sign(),
		"HS256 with the EC key, no kid":    jwttest.Token{Alg: "HS256", Key: jwttest.Key{Secret: f.p256.PublicDER()}, Claims: map[string]any{"sub": "x"}}.Sign(),
		"RS256 signed by the HMAC key":     jwttest.SignRaw("HS256", f.hs, header(`{"alg":"RS256","kid":"r"}`)+"."+claims),
		"ES256 with the P-384 key":         jwttest.Token{Alg: "ES384", Key: f.p384, Header: map[string]any{"alg": "ES256"}, Claims: map[string]any{}}.Sign(),
		"ES256 signature one byte short":   parts2(f.token("ES256", nil), func(s []byte) []byte { return s[:63] }),
		"an unknown kid":                   jwttest.Token{Alg: "RS256", Key: f.rsa, Header: map[string]any{"kid": "nope"}, Claims: map[string]any{}}.Sign(),
		"another key with the kid":         jwttest.Token{Alg: "RS256", Key: jwttest.RSA("r", 2048), Claims: map[string]any{}}.Sign(),
		"kid a number":                     jwttest.Token{Alg: "RS256", Key: f.rsa, Header: map[string]any{"kid": 7}, Claims: map[string]any{}}.Sign(),
		"kid empty":                        jwttest.Token{Alg: "RS256", Key: f.rsa, Header: map[string]any{"kid": ""}, Claims: map[string]any{}}.Sign(),
		"crit":                             jwttest.Token{Alg: "RS256", Key: f.rsa, Header: map[string]any{"crit": []string{"exp"}}, Claims: map[string]any{}}.Sign(),
		"expired":                          f.token("RS256", map[string]any{"exp": now.Unix()}),
		"not yet valid":                    f.token("RS256", map[string]any{"nbf": now.Unix() + 5}),
		"issued in the future":             f.token("RS256", map[string]any{"iat": now.Unix() + 5}),
		"exp a string":                     f.token("RS256", map[string]any{"exp": "2099"}),
		"exp null":                         f.token("RS256", map[string]any{"exp": nil}),
		"claims an array":                  jwttest.SignRaw("RS256", f.rsa, parts[0]+"."+jwttest.B64([]byte(`[]`))),
		"claims a string":                  jwttest.SignRaw("RS256", f.rsa, parts[0]+"."+jwttest.B64([]byte(`"x"`))),
		"claims nested too deep":           jwttest.SignRaw("RS256", f.rsa, parts[0]+"."+jwttest.B64([]byte(`{"x":`+deep+`}`))),
		"claims not UTF-8":                 jwttest.SignRaw("RS256", f.rsa, parts[0]+"."+jwttest.B64([]byte("{\"sub\":\"\xff\"}"))),
		"claims with NaN":                  jwttest.SignRaw("RS256", f.rsa, parts[0]+"."+jwttest.B64([]byte(`{"exp":NaN}`))),
		"a header that is not JSON":        jwttest.SignRaw("RS256", f.rsa, header(`alg=RS256`)+"."+claims),
		"a header too long":                jwttest.SignRaw("RS256", f.rsa, header(`{"alg":"RS256","x":"`+strings.Repeat("x", MaxHeaderSegment)+`"}`)+"."+claims),
		"padded base64url":                 parts[0] + "=." + parts[1] + "." + parts[2],
		"base64, not base64url":            strings.NewReplacer("-", "+", "_", "/").Replace(valid) + "+/",
		"a non-canonical last character":   parts[0] + "." + parts[1] + "." + noncanonical(parts[2]),
		"a length no base64 has":           parts[0] + "." + parts[1] + "." + parts[2] + "A",
		"two parts":                        parts[0] + "." + parts[1],
		"five parts (JWE)":                 valid + ".a.b",
		"white space inside":               parts[0] + ". " + parts[1] + "." + parts[2],
		"the Authorization header too big": f.token("RS256", map[string]any{"x": strings.Repeat("x", MaxAuthorizationBytes)}),
	}
	for name, token := range cases {
		v := Decide(bearer(token), p, nil, now)
		if v.Status != 401 || v.Challenge != `Bearer realm="a \"quoted\" realm", error="invalid_token"` {
			t.Errorf("%s: %d %q (%s), want 401 invalid_token", name, v.Status, v.Challenge, v.Reason)
		}
	}
	for name, auth := range map[string]string{"none": "", "Basic": "Basic YTpi", "Bearer alone": "Bearer", "Bearer, a tab": "Bearer\t" + valid} {
		v := Decide(auth, p, nil, now)
		if v.Status != 401 || v.Challenge != `Bearer realm="a \"quoted\" realm"` {
			t.Errorf("%s: %d %q, want 401 with the bare challenge", name, v.Status, v.Challenge)
		}
	}
}

// parts2 changes a token's signature.
func parts2(token string, change func([]byte) []byte) string {
	parts := strings.Split(token, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	return parts[0] + "." + parts[1] + "." + jwttest.B64(change(sig))
}

// noncanonical spells the same bytes with nonzero unused bits, where the
// last character has some.
func noncanonical(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[last|1])
}

// TestDecideTimes: exp, nbf and iat with the leeway; a remote key set not
// fetched yet answers 503, never lets through.
func TestDecideTimes(t *testing.T) {
	f := newFixture(t)
	p := &Policy{Realm: "api", Keys: &f.set, LeewayMillis: 30000}
	for name, tc := range map[string]struct {
		claims map[string]any
		status int
	}{
		"expired within the leeway":    {map[string]any{"exp": now.Unix() - 29}, 200},
		"expired past the leeway":      {map[string]any{"exp": now.Unix() - 30}, 401},
		"not valid yet, within":        {map[string]any{"nbf": now.Unix() + 30}, 200},
		"not valid yet, past":          {map[string]any{"nbf": now.Unix() + 31}, 401},
		"issued in the future, within": {map[string]any{"iat": now.Unix() + 30}, 200},
		"issued in the future, past":   {map[string]any{"iat": now.Unix() + 31}, 401},
		"no exp at all":                {map[string]any{"sub": "x"}, 200},
		"fractional exp":               {map[string]any{"exp": float64(now.Unix()) - 29.5}, 200},
	} {
		if v := Decide(bearer(f.token("ES256", tc.claims)), p, nil, now); v.Status != tc.status {
			t.Errorf("%s: %d (%s), want %d", name, v.Status, v.Reason, tc.status)
		}
	}
	remote := &Policy{Realm: "api", KeySet: "0123456789abcdef0123456789abcdef"}
	if v := Decide(bearer(f.token("ES256", nil)), remote, nil, now); v.Status != 503 {
		t.Errorf("before the remote set arrived: %+v, want 503", v)
	}
	if v := Decide(bearer(f.token("ES256", nil)), remote, &f.set, now); v.Status != 200 {
		t.Errorf("with the remote set: %+v", v)
	}
}

// TestDecideKeySelection: a kid picks its keys; without one, the keys of
// its alg are tried, MaxTries at most; a set whose keys have no kid
// verifies tokens that name one.
func TestDecideKeySelection(t *testing.T) {
	var keys []jwttest.Key
	for range MaxTries + 1 {
		keys = append(keys, jwttest.EC("", elliptic.P256()))
	}
	set, _, err := Parse(jwttest.JWKS(keys))
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Realm: "api", Keys: &set}
	sign := func(k jwttest.Key, kid string) string {
		h := map[string]any{}
		if kid != "" {
			h["kid"] = kid
		}
		return jwttest.Token{Alg: "ES256", Key: k, Header: h, Claims: map[string]any{}}.Sign()
	}
	if v := Decide(bearer(sign(keys[MaxTries-1], "")), p, nil, now); v.Status != 200 {
		t.Errorf("the last key tried: %+v", v)
	}
	if v := Decide(bearer(sign(keys[MaxTries], "")), p, nil, now); v.Status != 401 {
		t.Errorf("a key past MaxTries: %+v, want 401", v)
	}
	if v := Decide(bearer(sign(keys[0], "any")), p, nil, now); v.Status != 200 {
		t.Errorf("a kid, keys without: %+v", v)
	}
}

// TestDecideAuthorization: NGINX Gateway Fabric's rules (any or all
// rules, any or all claims per rule, exact or regex values, an array's
// elements, nested claims); a token that does not satisfy them is 401
// insufficient_scope (NGF's auth_jwt_require answers 401); forwarded
// claims are set, and one a header cannot carry refuses the request.
func TestDecideAuthorization(t *testing.T) {
	f := newFixture(t)
	rules := &Requirement{All: true, Rules: []Rule{
		{Claims: []ClaimMatch{{Path: []string{"role"}, Exact: []string{"admin", "editor"}}, {Path: []string{"realm_access", "roles"}, Exact: []string{"ops"}}}},
		{All: true, Claims: []ClaimMatch{{Path: []string{"email"}, Regex: AnchoredRegex([]string{`.*@example\.com`})}, {Path: []string{"level"}, Exact: []string{"3"}}}},
	}}
	p := &Policy{Realm: "api", Keys: &f.set, Authorization: rules, Headers: []Header{{Path: []string{"sub"}, Variable: "gw_jwt_sub"}, {Path: []string{"groups"}, Variable: "gw_jwt_groups"}}}
	base := func(set map[string]any) map[string]any {
		c := map[string]any{"role": "editor", "email": "a@example.com", "level": 3, "sub": "alice", "groups": []any{"a", "b", 7, true, map[string]any{}}}
		for k, v := range set {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	for name, tc := range map[string]struct {
		claims map[string]any
		status int
	}{
		"every rule":                     {base(nil), 200},
		"the role in an array":           {base(map[string]any{"role": []any{"x", "admin"}}), 200},
		"the other claim of rule 1":      {base(map[string]any{"role": "x", "realm_access": map[string]any{"roles": []any{"ops"}}}), 200},
		"a wrong role":                   {base(map[string]any{"role": "viewer"}), 401},
		"no role":                        {base(map[string]any{"role": nil}), 401},
		"role an object":                 {base(map[string]any{"role": map[string]any{"admin": true}}), 401},
		"an email of another domain":     {base(map[string]any{"email": "a@example.com.evil"}), 401},
		"level 3.0 is 3":                 {base(map[string]any{"level": 3.0}), 200},
		"level \"3\" matches too":        {base(map[string]any{"level": "3"}), 200},
		"level 4":                        {base(map[string]any{"level": 4}), 401},
		"a newline in a forwarded claim": {base(map[string]any{"sub": "alice\r\nX-Admin: 1"}), 401},
		"a forwarded claim too long":     {base(map[string]any{"sub": strings.Repeat("a", MaxClaimHeaderBytes+1)}), 401},
	} {
		v := Decide(bearer(f.token("PS256", tc.claims)), p, nil, now)
		if v.Status != tc.status {
			t.Errorf("%s: %d (%s), want %d", name, v.Status, v.Reason, tc.status)
		}
	}
	v := Decide(bearer(f.token("PS256", base(nil))), p, nil, now)
	if v.Headers["gw_jwt_sub"] != "alice" || v.Headers["gw_jwt_groups"] != "a,b,7,true" {
		t.Errorf("forwarded %v", v.Headers)
	}
	v = Decide(bearer(f.token("PS256", base(map[string]any{"role": "x"}))), p, nil, now)
	if v.Challenge != `Bearer realm="api", error="insufficient_scope"` {
		t.Errorf("a token not authorized: %q", v.Challenge)
	}
	v = Decide(bearer(f.token("PS256", base(map[string]any{"sub": nil, "groups": nil}))), &Policy{Realm: "api", Keys: &f.set, Headers: p.Headers}, nil, now)
	if v.Status != 200 || v.Headers["gw_jwt_sub"] != "" || v.Headers["gw_jwt_groups"] != "" {
		t.Errorf("claims absent: %+v", v)
	}
}

// TestScalarText: numbers are written as Lua's "%.14g" writes them.
func TestScalarText(t *testing.T) {
	for v, want := range map[float64]string{3: "3", 3.5: "3.5", 1e21: "1e+21", 123456789012345678: "1.2345678901235e+17", 0.0001: "0.0001", 0.00001: "1e-05", -2: "-2"} {
		if got, _ := scalar(v); got != want {
			t.Errorf("%v: %q, want %q", v, got, want)
		}
	}
}

// TestJSONAsCJSON: what lua-cjson refuses, the reference refuses.
func TestJSONAsCJSON(t *testing.T) {
	for text, ok := range map[string]bool{
		`{"a":"\ud800\udc00"}`: true, `{"a":"\udc00"}`: false, `{"a":"\ud800"}`: false, `{"a":"\ud800x"}`: false,
		`{"a":"\\udc00"}`: true, `{"a":"\u0041"}`: true, `{"a":NaN}`: false, `{"a":0x10}`: false, `{"a":1e400}`: true,
		`{"a":01}`: false, `{"a":1,}`: false, `{"a":1} x`: false, `{"a":1,"a":2}`: true,
	} {
		if _, got := decodeJSON([]byte(text)); got != ok {
			t.Errorf("%s: decoded %v, want %v", text, got, ok)
		}
	}
}
