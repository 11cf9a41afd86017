package jwks

import (
	"crypto"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/test/jwttest"
)

// keysOf are test keys made once: RSA keys are slow to make.
var keysOf = struct {
	rsa2048, rsa1024 jwttest.Key
	p256, p384, p521 jwttest.Key
}{
	rsa2048: jwttest.RSA("r", 2048), rsa1024: jwttest.RSA("weak", 1024),
	p256: jwttest.EC("e256", elliptic.P256()), p384: jwttest.EC("e384", elliptic.P384()), p521: jwttest.EC("e521", elliptic.P521()),
}

func jwkWith(k jwttest.Key, set map[string]any) map[string]any {
	m := k.JWK()
	for name, v := range set {
		if v == nil {
			delete(m, name)
		} else {
			m[name] = v
		}
	}
	return m
}

func jwksOf(keys ...map[string]any) []byte {
	data, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		panic(err)
	}
	return data
}

// TestParseKeys: each usable key verifies the algorithms of its type (its
// curve's, its secret's length's), narrowed by its declared alg; and it
// reaches the data plane as DER that x509 (OpenSSL's d2i_PUBKEY alike)
// reads back as the same key.
func TestParseKeys(t *testing.T) {
	secret32, secret64 := jwttest.HMAC("h32", 32), jwttest.HMAC("h64", 64)
	for name, tc := range map[string]struct {
		jwk  map[string]any
		algs []string
	}{
		"RSA":                  {jwkWith(keysOf.rsa2048, nil), []string{"PS256", "PS384", "PS512", "RS256", "RS384", "RS512"}},
		"RSA declaring RS256":  {jwkWith(keysOf.rsa2048, map[string]any{"alg": "RS256", "use": "sig"}), []string{"RS256"}},
		"RSA declaring PS512":  {jwkWith(keysOf.rsa2048, map[string]any{"alg": "PS512", "key_ops": []string{"verify"}}), []string{"PS512"}},
		"P-256":                {jwkWith(keysOf.p256, nil), []string{"ES256"}},
		"P-384":                {jwkWith(keysOf.p384, map[string]any{"alg": "ES384"}), []string{"ES384"}},
		"a 32-byte secret":     {jwkWith(secret32, nil), []string{"HS256"}},
		"a 64-byte secret":     {jwkWith(secret64, nil), []string{"HS256", "HS384", "HS512"}},
		"a secret for HS384":   {jwkWith(secret64, map[string]any{"alg": "HS384"}), []string{"HS384"}},
		"padded base64url (n)": {jwkWith(keysOf.rsa2048, map[string]any{"n": strings.TrimRight(b64pad(keysOf.rsa2048.JWK()["n"].(string)), "")}), []string{"PS256", "PS384", "PS512", "RS256", "RS384", "RS512"}},
	} {
		set, refused, err := Parse(jwksOf(tc.jwk))
		if err != nil || len(refused) > 0 || len(set.Keys) != 1 {
			t.Errorf("%s: %+v %v %v", name, set, refused, err)
			continue
		}
		k := set.Keys[0]
		if !slices.Equal(k.Algs, tc.algs) {
			t.Errorf("%s: algs %v, want %v", name, k.Algs, tc.algs)
		}
		if k.Kid != tc.jwk["kid"] {
			t.Errorf("%s: kid %q", name, k.Kid)
		}
		if k.Type == TypeOct {
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(k.DER)
		if err != nil {
			t.Errorf("%s: the DER does not parse: %v", name, err)
		}
		var want jwttest.Key
		switch {
		case k.Type == TypeRSA:
			want = keysOf.rsa2048
		case k.Curve == "P-256":
			want = keysOf.p256
		default:
			want = keysOf.p384
		}
		if eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(want.Signer.Public()) {
			t.Errorf("%s: the DER is another key", name)
		}
	}
}

func b64pad(s string) string {
	for len(s)%4 != 0 {
		s += "="
	}
	return s
}

// TestParseRefusesKeys: a key Gatewall must not verify with is refused
// alone, named by its position and kid with why, never with its secret.
func TestParseRefusesKeys(t *testing.T) {
	big8200 := new(big.Int).Lsh(big.NewInt(1), 8199)
	big8200.Or(big8200, big.NewInt(1))
	short := jwttest.HMAC("short", 31)
	secret32 := jwttest.HMAC("h32", 32)
	offCurve := jwkWith(keysOf.p256, map[string]any{"y": keysOf.p256.JWK()["x"]})
	for name, tc := range map[string]struct {
		jwk  map[string]any
		want string
	}{
		"RSA of 1024 bits":        {jwkWith(keysOf.rsa1024, nil), "an RSA key of 1024 bits"},
		"RSA over 8192 bits":      {jwkWith(keysOf.rsa2048, map[string]any{"n": jwttest.B64(big8200.Bytes())}), "an RSA key of 8200 bits"},
		"RSA exponent 1":          {jwkWith(keysOf.rsa2048, map[string]any{"e": "AQ"}), "RSA exponent"},
		"RSA exponent even":       {jwkWith(keysOf.rsa2048, map[string]any{"e": "AQAA"}), "RSA exponent"},
		"RSA without n":           {jwkWith(keysOf.rsa2048, map[string]any{"n": nil}), "no n"},
		"RSA for encryption":      {jwkWith(keysOf.rsa2048, map[string]any{"use": "enc", "alg": "RSA-OAEP"}), `use "enc"`},
		"RSA declaring RSA-OAEP":  {jwkWith(keysOf.rsa2048, map[string]any{"alg": "RSA-OAEP"}), `alg "RSA-OAEP" is not`},
		"RSA declaring HS256":     {jwkWith(keysOf.rsa2048, map[string]any{"alg": "HS256"}), `alg "HS256" is not`},
		"RSA declaring ES256":     {jwkWith(keysOf.rsa2048, map[string]any{"alg": "ES256"}), `alg "ES256" is not`},
		"RSA key_ops sign only":   {jwkWith(keysOf.rsa2048, map[string]any{"key_ops": []string{"sign"}}), "key_ops"},
		"P-521":                   {jwkWith(keysOf.p521, nil), `curve "P-521" is not supported`},
		"P-256 declaring ES384":   {jwkWith(keysOf.p256, map[string]any{"alg": "ES384"}), `alg "ES384" is not`},
		"P-256 off its curve":     {offCurve, "not a point of P-256"},
		"P-256 with a short x":    {jwkWith(keysOf.p256, map[string]any{"x": "AQ"}), "32 bytes each"},
		"EC without crv":          {jwkWith(keysOf.p256, map[string]any{"crv": nil}), "no crv"},
		"a secret of 31 bytes":    {jwkWith(short, nil), "a secret of 31 bytes"},
		"HS512 of 32 bytes":       {jwkWith(secret32, map[string]any{"alg": "HS512"}), "alg HS512 needs a secret of at least 64 bytes"},
		"EdDSA":                   {map[string]any{"kty": "OKP", "crv": "Ed25519", "x": "AQ", "kid": "ed"}, "OKP (EdDSA) is not supported"},
		"an unknown type":         {map[string]any{"kty": "RSA-ish", "kid": "x"}, `key type "RSA-ish"`},
		"no kty":                  {map[string]any{"kid": "x"}, "no kty"},
		"a number for kid":        {map[string]any{"kty": "oct", "kid": 7}, "not a key"},
		"a kid of 257 bytes":      {jwkWith(secret32, map[string]any{"kid": strings.Repeat("k", 257)}), "kid is 257 bytes"},
		"n that is not base64url": {jwkWith(keysOf.rsa2048, map[string]any{"n": "!!"}), "n is not base64url"},
	} {
		set, refused, err := Parse(jwksOf(jwkWith(secret32, map[string]any{"kid": "good"}), tc.jwk))
		if err != nil || len(set.Keys) != 1 || set.Keys[0].Kid != "good" {
			t.Errorf("%s: the good key: %+v %v", name, set.Keys, err)
		}
		if len(refused) != 1 || !strings.HasPrefix(refused[0], "key 2") || !strings.Contains(refused[0], tc.want) {
			t.Errorf("%s: refused %q, want key 2 refused: %s", name, refused, tc.want)
		}
		for _, secret := range []string{jwttest.B64(short.Secret), jwttest.B64(secret32.Secret)} {
			if strings.Contains(strings.Join(refused, " "), secret) {
				t.Errorf("%s: a message holds a secret: %q", name, refused)
			}
		}
	}
}

// TestParseRefusesSets: what is not a key set, or holds no usable key, is
// refused whole; a set over the bounds is refused or cut, saying so.
func TestParseRefusesSets(t *testing.T) {
	for name, data := range map[string]string{
		"not JSON":           "invalid-jwks-data",
		"a key, not a set":   `{"kty":"oct","k":"` + strings.Repeat("A", 43) + `"}`,
		"keys not a list":    `{"keys": "x"}`,
		"a list":             `[]`,
		"no keys":            `{"keys": []}`,
		"data after the set": `{"keys": []} {}`,
		"only refused keys":  string(jwksOf(jwkWith(keysOf.rsa1024, nil))),
		"too large":          `{"keys": [], "x": "` + strings.Repeat("a", MaxJWKSBytes) + `"}`,
	} {
		if set, _, err := Parse([]byte(data)); err == nil {
			t.Errorf("%s: accepted %+v", name, set)
		}
	}
	_, _, err := Parse(jwksOf(jwkWith(keysOf.rsa1024, nil)))
	if err == nil || !strings.Contains(err.Error(), "key 1 (kid \"weak\"): an RSA key of 1024 bits") {
		t.Errorf("a set of one weak key: %v", err)
	}
	var many []map[string]any
	for range MaxKeys + 2 {
		many = append(many, jwkWith(jwttest.HMAC("", 64), nil))
	}
	set, refused, err := Parse(jwksOf(many...))
	if err != nil || len(set.Keys) != MaxKeys || len(refused) != 2 || !strings.Contains(refused[0], "over the 32 keys") {
		t.Errorf("%d keys: %d kept, refused %q, %v", len(many), len(set.Keys), refused, err)
	}
}

// TestLargestSetFits: a set of the most keys, each the largest (RSA of
// MaxRSABits, the longest kid), fits MaxSetBytes, the bound of the data
// plane's shared dict.
func TestLargestSetFits(t *testing.T) {
	n := make([]byte, MaxRSABits/8)
	if _, err := rand.Read(n); err != nil {
		t.Fatal(err)
	}
	n[0] |= 0x80
	var keys []map[string]any
	for range MaxKeys {
		keys = append(keys, map[string]any{"kty": "RSA", "kid": strings.Repeat("k", MaxKidBytes), "n": jwttest.B64(n), "e": "AQAB"})
	}
	set, refused, err := Parse(jwksOf(keys...))
	if err != nil || len(refused) > 0 {
		t.Fatal(refused, err)
	}
	if got := len(set.Encode()); got > MaxSetBytes {
		t.Errorf("the largest set is %d bytes, over MaxSetBytes (%d)", got, MaxSetBytes)
	}
}
