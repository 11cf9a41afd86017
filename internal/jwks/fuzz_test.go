package jwks

import (
	"strings"
	"testing"

	"github.com/gatewall/gatewall/test/jwttest"
)

// FuzzDecide: whatever a client sends, a token is let through only when
// its signed part (header and claims, as sent) is one the test signed:
// no spelling, algorithm or key trick makes Decide accept what the key's
// holder did not sign. The seeds are valid tokens of every algorithm and
// the attacks of TestDecideRefusals; go test -fuzz mutates them.
func FuzzDecide(f *testing.F) {
	fx := newFixture(f)
	signed := map[string]bool{}
	p := &Policy{Realm: "api", Keys: &fx.set, LeewayMillis: 1000,
		Authorization: &Requirement{Rules: []Rule{{Claims: []ClaimMatch{{Path: []string{"role"}, Exact: []string{"admin"}}, {Path: []string{"sub"}, Regex: AnchoredRegex([]string{"a.*"})}}}}},
		Headers:       []Header{{Path: []string{"sub"}, Variable: "gw_jwt_sub"}}}
	for _, alg := range Algorithms() {
		for _, claims := range []map[string]any{
			{"sub": "alice", "exp": now.Unix() + 60},
			{"role": "admin", "nbf": now.Unix() - 5, "iat": now.Unix()},
			{"role": []any{"x", "admin"}, "exp": now.Unix() - 60},
		} {
			tok := fx.token(alg, claims)
			signed[tok[:strings.LastIndexByte(tok, '.')]] = true
			f.Add(tok)
		}
	}
	valid := fx.token("RS256", nil)
	f.Add(valid[:strings.LastIndexByte(valid, '.')] + ".")
	f.Add(jwttest.B64([]byte(`{"alg":"none"}`)) + "." + jwttest.B64([]byte(`{"role":"admin"}`)) + ".")
	f.Add(jwttest.Token{Alg: "HS256", Key: jwttest.Key{Kid: "r", Secret: fx.rsa.PublicDER()}, Claims: map[string]any{"role": "admin"}}.Sign())
	f.Fuzz(func(t *testing.T, token string) {
		v := Decide("Bearer "+token, p, nil, now)
		switch v.Status {
		case 200:
			parts := strings.Split(strings.TrimSpace(token), ".")
			if len(parts) != 3 || !signed[parts[0]+"."+parts[1]] {
				t.Fatalf("accepted a token whose signed part the test never signed: %q", token)
			}
		case 401:
			if !strings.HasPrefix(v.Challenge, `Bearer realm="api"`) {
				t.Fatalf("401 without the challenge: %+v", v)
			}
		default:
			t.Fatalf("status %d for %q", v.Status, token)
		}
	})
}
