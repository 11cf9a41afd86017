package jwks

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Bounds of a key set. The data plane keeps every key set of a Gateway in
// memory (a remote one in a shared dict of fixed size: nginx/config), and
// tries at most MaxTries keys per token, so a set is bounded in bytes and
// keys; a key in size.
const (
	// MaxJWKSBytes bounds a key set as written (a Secret's key, a fetched
	// body): IdPs' sets, x5c chains included, are a few KiB.
	MaxJWKSBytes = 256 << 10
	// MaxKeys bounds the usable keys of a set.
	MaxKeys = 32
	// MinRSABits and MaxRSABits bound an RSA key's modulus: under 2048
	// bits is breakable (NIST SP 800-131A); over 8192 only costs.
	MinRSABits = 2048
	MaxRSABits = 8192
	// MaxSecretBytes bounds an HMAC secret.
	MaxSecretBytes = 1024
	// MaxKidBytes bounds a key ID, in a set and in a token.
	MaxKidBytes = 256
	// MaxSetBytes bounds a Set as the data plane reads it (its JSON): what
	// MaxKeys keys of the largest size take, with room.
	MaxSetBytes = 64 << 10
)

// Key types and the algorithms Gatewall verifies.
const (
	TypeRSA = "RSA"
	TypeEC  = "EC"
	TypeOct = "oct"
)

// algorithms are the JWS algorithms ("alg") Gatewall verifies, each with
// the key type it needs and its hash size in bytes (an ES* signature is
// twice its curve's size, an HS* secret at least the hash size).
var algorithms = map[string]struct {
	kty  string
	size int
	crv  string
}{
	"RS256": {TypeRSA, 32, ""}, "RS384": {TypeRSA, 48, ""}, "RS512": {TypeRSA, 64, ""},
	"PS256": {TypeRSA, 32, ""}, "PS384": {TypeRSA, 48, ""}, "PS512": {TypeRSA, 64, ""},
	"ES256": {TypeEC, 32, "P-256"}, "ES384": {TypeEC, 48, "P-384"},
	"HS256": {TypeOct, 32, ""}, "HS384": {TypeOct, 48, ""}, "HS512": {TypeOct, 64, ""},
}

// Algorithms are the algorithms Gatewall verifies, sorted.
func Algorithms() []string {
	out := make([]string, 0, len(algorithms))
	for a := range algorithms {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Set is a key set as the data plane reads it: its usable keys, in the
// order the set gave them.
type Set struct {
	Keys []Key `json:"keys"`
}

// Key is one usable key.
type Key struct {
	// Kid is the key's ID, "" when it has none.
	Kid string `json:"kid,omitempty"`
	// Type is TypeRSA, TypeEC or TypeOct; Curve an EC key's curve.
	Type  string `json:"kty"`
	Curve string `json:"crv,omitempty"`
	// Algs are the algorithms it verifies, sorted: never one of another
	// key type (an RSA public key is not an HMAC secret).
	Algs []string `json:"algs"`
	// DER is an RSA or EC key's public key (SubjectPublicKeyInfo).
	DER []byte `json:"der,omitempty"`
	// Secret is an oct key's secret.
	Secret []byte `json:"k,omitempty"`
}

// Encode is the set's JSON, as the data plane reads it.
func (s Set) Encode() []byte {
	data, err := json.Marshal(s)
	if err != nil {
		panic("jwks: a set does not encode: " + err.Error())
	}
	return data
}

// jwk are the members of a JSON Web Key that Gatewall reads (RFC 7517,
// 7518); others are ignored (x5c, x5t: the key's own numbers decide).
type jwk struct {
	Kty, Kid, Use, Alg, Crv, N, E, X, Y, K *string
	KeyOps                                 *[]string `json:"key_ops"`
}

// Parse checks a JSON Web Key Set and returns its usable keys, and the
// keys it refused, each named by its position and kid with why (never
// with a secret). It fails when data is not a key set, or holds no usable
// key.
func Parse(data []byte) (Set, []string, error) {
	if len(data) > MaxJWKSBytes {
		return Set{}, nil, fmt.Errorf("the key set is %d bytes, over the %d it may have", len(data), MaxJWKSBytes)
	}
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		if err == nil {
			err = errors.New("data after the set")
		}
		return Set{}, nil, fmt.Errorf(`not a JSON Web Key Set ({"keys": [...]}): %v`, err)
	}
	if doc.Keys == nil {
		return Set{}, nil, errors.New(`not a JSON Web Key Set: it has no "keys" list ({"keys": [...]})`)
	}
	var set Set
	var refused []string
	for i, raw := range *doc.Keys {
		var j jwk
		k, err := func() (Key, error) {
			if err := json.Unmarshal(raw, &j); err != nil {
				return Key{}, fmt.Errorf("not a key: %v", err)
			}
			return parseKey(j)
		}()
		switch {
		case err != nil:
			refused = append(refused, fmt.Sprintf("key %d%s: %v", i+1, kidNote(j.Kid), err))
		case len(set.Keys) == MaxKeys:
			refused = append(refused, fmt.Sprintf("key %d%s: over the %d keys a set may have", i+1, kidNote(j.Kid), MaxKeys))
		default:
			set.Keys = append(set.Keys, k)
		}
	}
	if len(set.Keys) == 0 {
		why := "it has no keys"
		if len(refused) > 0 {
			why = strings.Join(refused, "; ")
		}
		return Set{}, refused, fmt.Errorf("no key of the set can verify tokens: %s", why)
	}
	return set, refused, nil
}

// kidNote names a key's kid in a message, cut.
func kidNote(kid *string) string {
	if kid == nil {
		return ""
	}
	k := *kid
	if len(k) > 64 {
		k = k[:64] + "..."
	}
	return fmt.Sprintf(" (kid %q)", k)
}

// parseKey checks one key and returns it as the data plane reads it.
func parseKey(j jwk) (Key, error) {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	k := Key{Kid: str(j.Kid), Type: str(j.Kty)}
	if len(k.Kid) > MaxKidBytes {
		return Key{}, fmt.Errorf("its kid is %d bytes, over %d", len(k.Kid), MaxKidBytes)
	}
	if u := str(j.Use); u != "" && u != "sig" {
		return Key{}, fmt.Errorf("use %q: not a key for signatures", u)
	}
	if j.KeyOps != nil && !slices.Contains(*j.KeyOps, "verify") {
		return Key{}, errors.New(`key_ops without "verify": not a key that verifies signatures`)
	}
	var err error
	switch k.Type {
	case TypeRSA:
		k.DER, err = rsaKey(str(j.N), str(j.E))
	case TypeEC:
		k.Curve = str(j.Crv)
		k.DER, err = ecKey(k.Curve, str(j.X), str(j.Y))
	case TypeOct:
		k.Secret, err = number("k", str(j.K))
		if err == nil && len(k.Secret) > MaxSecretBytes {
			err = fmt.Errorf("a secret of %d bytes, over %d", len(k.Secret), MaxSecretBytes)
		}
	case "OKP":
		return Key{}, errors.New("key type OKP (EdDSA) is not supported: RSA, EC (P-256, P-384) and oct keys are")
	case "":
		return Key{}, errors.New("no kty")
	default:
		return Key{}, fmt.Errorf("key type %q is not supported: RSA, EC (P-256, P-384) and oct keys are", k.Type)
	}
	if err != nil {
		return Key{}, err
	}
	k.Algs, err = keyAlgs(k, str(j.Alg))
	return k, err
}

// keyAlgs are the algorithms a key verifies: those of its type (an EC
// key's curve, a secret's length: at least the hash size), or the one it
// declares, which must be among them.
func keyAlgs(k Key, declared string) ([]string, error) {
	var algs []string
	for _, a := range Algorithms() {
		d := algorithms[a]
		if d.kty == k.Type && (d.crv == "" || d.crv == k.Curve) && (k.Type != TypeOct || len(k.Secret) >= d.size) {
			algs = append(algs, a)
		}
	}
	if k.Type == TypeOct && len(algs) == 0 {
		return nil, fmt.Errorf("a secret of %d bytes: HMAC needs at least the hash's size (32 bytes for HS256)", len(k.Secret))
	}
	if declared == "" {
		return algs, nil
	}
	if slices.Contains(algs, declared) {
		return []string{declared}, nil
	}
	if d, ok := algorithms[declared]; ok && d.kty == TypeOct && k.Type == TypeOct {
		return nil, fmt.Errorf("alg %s needs a secret of at least %d bytes; it has %d", declared, d.size, len(k.Secret))
	}
	return nil, fmt.Errorf("alg %q is not a signature algorithm Gatewall verifies with this key (%s)", declared, strings.Join(algs, ", "))
}

// number decodes a base64url member (RFC 7518: without padding; padded
// ones, which some key sets have, are read too).
func number(name, v string) ([]byte, error) {
	if v == "" {
		return nil, fmt.Errorf("no %s", name)
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.URLEncoding.DecodeString(v); err != nil {
			return nil, fmt.Errorf("%s is not base64url", name)
		}
	}
	return b, nil
}

// rsaKey checks an RSA public key's modulus and exponent.
func rsaKey(n64, e64 string) ([]byte, error) {
	nb, err := number("n", n64)
	if err != nil {
		return nil, err
	}
	eb, err := number("e", e64)
	if err != nil {
		return nil, err
	}
	n := new(big.Int).SetBytes(nb)
	if bits := n.BitLen(); bits < MinRSABits || bits > MaxRSABits {
		return nil, fmt.Errorf("an RSA key of %d bits; from %d to %d are accepted", bits, MinRSABits, MaxRSABits)
	}
	e := new(big.Int).SetBytes(eb)
	// Go and OpenSSL both refuse larger exponents; 65537 is everyone's.
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
		return nil, errors.New("an RSA exponent that is not an odd number from 3 to 2^31-1")
	}
	return x509.MarshalPKIXPublicKey(&rsa.PublicKey{N: n, E: int(e.Int64())})
}

// ecKey checks an EC public key: its curve, and that its point is on it.
func ecKey(crv, x64, y64 string) ([]byte, error) {
	var curve elliptic.Curve
	switch crv {
	case "P-256":
		curve = elliptic.P256()
	case "P-384":
		curve = elliptic.P384()
	case "":
		return nil, errors.New("no crv")
	default:
		return nil, fmt.Errorf("curve %q is not supported: P-256 (ES256) and P-384 (ES384) are", crv)
	}
	size := (curve.Params().BitSize + 7) / 8
	x, err := number("x", x64)
	if err != nil {
		return nil, err
	}
	y, err := number("y", y64)
	if err != nil {
		return nil, err
	}
	if len(x) != size || len(y) != size {
		return nil, fmt.Errorf("x and y of %s have %d bytes each", crv, size)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, fmt.Errorf("not a point of %s", crv)
	}
	return x509.MarshalPKIXPublicKey(pub)
}
