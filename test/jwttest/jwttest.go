// Package jwttest makes the keys, key sets and tokens tests of JWT
// authentication need, with Go's own cryptography: what an identity
// provider would issue, and what an attacker would send.
package jwttest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash"
	"math/big"
)

// Key is a signing key and how a key set names it.
type Key struct {
	Kid string
	// Alg is the alg the key set declares ("" declares none).
	Alg string
	// Signer is an *rsa.PrivateKey or *ecdsa.PrivateKey; Secret an HMAC
	// key's.
	Signer crypto.Signer
	Secret []byte
}

// RSA returns an RSA key of bits.
func RSA(kid string, bits int) Key {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		panic(err)
	}
	return Key{Kid: kid, Signer: k}
}

// EC returns an EC key of a curve (elliptic.P256(), P384(), P521()).
func EC(kid string, c elliptic.Curve) Key {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		panic(err)
	}
	return Key{Kid: kid, Signer: k}
}

// HMAC returns a secret of n random bytes.
func HMAC(kid string, n int) Key {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return Key{Kid: kid, Secret: b}
}

// B64 is base64url without padding.
func B64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// JWK is the key's public JSON Web Key (an HMAC key's secret).
func (k Key) JWK() map[string]any {
	m := map[string]any{}
	if k.Kid != "" {
		m["kid"] = k.Kid
	}
	if k.Alg != "" {
		m["alg"] = k.Alg
	}
	switch s := k.Signer.(type) {
	case *rsa.PrivateKey:
		m["kty"], m["n"], m["e"] = "RSA", B64(s.N.Bytes()), B64(big.NewInt(int64(s.E)).Bytes())
	case *ecdsa.PrivateKey:
		size := (s.Curve.Params().BitSize + 7) / 8
		m["kty"], m["crv"] = "EC", s.Curve.Params().Name
		m["x"], m["y"] = B64(s.X.FillBytes(make([]byte, size))), B64(s.Y.FillBytes(make([]byte, size)))
	default:
		m["kty"], m["k"] = "oct", B64(k.Secret)
	}
	return m
}

// JWKS is a key set of the keys' JWKs, and of extra members as given.
func JWKS(keys []Key, extra ...map[string]any) []byte {
	var list []any
	for _, k := range keys {
		list = append(list, k.JWK())
	}
	for _, e := range extra {
		list = append(list, e)
	}
	data, err := json.Marshal(map[string]any{"keys": list})
	if err != nil {
		panic(err)
	}
	return data
}

// Token is a signed token of header and claims (header gets alg, and the
// key's kid unless it sets kid, or NoKid is set).
type Token struct {
	Alg    string
	Key    Key
	Header map[string]any
	Claims map[string]any
	NoKid  bool
}

// Sign returns the token as a string.
func (t Token) Sign() string {
	h := map[string]any{"alg": t.Alg, "typ": "JWT"}
	if t.Key.Kid != "" && !t.NoKid {
		h["kid"] = t.Key.Kid
	}
	for k, v := range t.Header {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	hj, err := json.Marshal(h)
	if err != nil {
		panic(err)
	}
	cj, err := json.Marshal(t.Claims)
	if err != nil {
		panic(err)
	}
	return SignRaw(t.Alg, t.Key, B64(hj)+"."+B64(cj))
}

// SignRaw signs a token's first two parts as they are.
func SignRaw(alg string, k Key, input string) string {
	return input + "." + B64(Signature(alg, k, []byte(input)))
}

// Signature signs input with alg and the key (alg "none": no signature).
func Signature(alg string, k Key, input []byte) []byte {
	var h crypto.Hash
	var newHash func() hash.Hash
	switch alg[len(alg)-3:] {
	case "256":
		h, newHash = crypto.SHA256, sha256.New
	case "384":
		h, newHash = crypto.SHA384, sha512.New384
	case "512":
		h, newHash = crypto.SHA512, sha512.New
	default:
		return nil
	}
	switch alg[:2] {
	case "HS":
		secret := k.Secret
		if secret == nil {
			// Key confusion: an RSA or EC public key used as the secret.
			secret = k.PublicDER()
		}
		m := hmac.New(newHash, secret)
		m.Write(input)
		return m.Sum(nil)
	}
	d := newHash()
	d.Write(input)
	digest := d.Sum(nil)
	switch s := k.Signer.(type) {
	case *rsa.PrivateKey:
		var sig []byte
		var err error
		if alg[0] == 'P' {
			sig, err = rsa.SignPSS(rand.Reader, s, h, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, s, h, digest)
		}
		if err != nil {
			panic(err)
		}
		return sig
	case *ecdsa.PrivateKey:
		r, ss, err := ecdsa.Sign(rand.Reader, s, digest)
		if err != nil {
			panic(err)
		}
		size := (s.Curve.Params().BitSize + 7) / 8
		return append(r.FillBytes(make([]byte, size)), ss.FillBytes(make([]byte, size))...)
	}
	panic(fmt.Sprintf("no key to sign %s with", alg))
}

// PublicDER is the key's public key (SubjectPublicKeyInfo), the bytes a
// key-confusion attack uses as an HMAC secret; PublicPEM the same in PEM.
func (k Key) PublicDER() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.Signer.Public())
	if err != nil {
		panic(err)
	}
	return der
}

func (k Key) PublicPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: k.PublicDER()})
}
