package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/gatewall/gatewall/internal/conditions"
)

// KeyPair is a certificate chain and its private key, checked as NGINX's
// OpenSSL loads them.
type KeyPair struct {
	// PEM is the one file NGINX reads as both the certificate and the key:
	// the chain's certificates, the leaf first, in the order given, each
	// once, then the key as PKCS #8.
	PEM []byte
}

// ParseKeyPair checks a certificate chain (the tls.crt of a Secret: the
// first certificate is the leaf) and its private key (tls.key) and
// re-encodes them. Blocks of other kinds in tls.crt (a key kept beside the
// chain, TRUSTED CERTIFICATE blocks) and text around blocks are left out,
// as Go's TLS stack leaves them out; tls.key's first private key is used.
// Errors name the key and the certificate (its position and subject).
func ParseKeyPair(certPEM, keyPEM []byte) (KeyPair, error) {
	chain, err := parseChain(certPEM)
	if err != nil {
		return KeyPair{}, fmt.Errorf("tls.crt: %w", err)
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return KeyPair{}, fmt.Errorf("tls.key: %w", err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(chain[0].PublicKey) {
		return KeyPair{}, fmt.Errorf("tls.key is not the key of the first certificate of tls.crt (%s)", describe(chain[0]))
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("tls.key: %w", err)
	}
	var out bytes.Buffer
	for _, c := range chain {
		encode(&out, blockCertificate, c.Raw)
	}
	encode(&out, "PRIVATE KEY", der)
	return KeyPair{PEM: out.Bytes()}, nil
}

// parseChain parses the certificates of tls.crt and checks each as
// OpenSSL does when it loads a chain: the leaf's key as an end entity's,
// the others' as CAs'.
func parseChain(data []byte) ([]*x509.Certificate, error) {
	blocks, _, err := decodeBlocks(data)
	if err != nil {
		return nil, err
	}
	var chain []*x509.Certificate
	seen := map[string]bool{}
	for i, b := range blocks {
		if b.Type != blockCertificate {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is a certificate that does not parse: %w", i+1, err)
		}
		if seen[string(c.Raw)] {
			continue // OpenSSL would load it twice, and send it twice
		}
		seen[string(c.Raw)] = true
		what := "ca key too small"
		if len(chain) == 0 {
			what = "ee key too small"
		}
		if err := checkKey(c, what); err != nil {
			return nil, fmt.Errorf("certificate %d (%s) %w", len(chain)+1, describe(c), err)
		}
		if err := checkSignature(c); err != nil {
			return nil, fmt.Errorf("certificate %d (%s) %w", len(chain)+1, describe(c), err)
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, errors.New("holds no PEM CERTIFICATE block")
	}
	return chain, nil
}

// parseKey parses the first private key of tls.key, in any of the forms
// OpenSSL and Go both read (PKCS #1, PKCS #8, SEC 1).
func parseKey(data []byte) (crypto.Signer, error) {
	blocks, _, err := decodeBlocks(data)
	if err != nil {
		return nil, err
	}
	for _, b := range blocks {
		if !strings.HasSuffix(b.Type, "PRIVATE KEY") {
			continue // EC PARAMETERS before an EC key, for one
		}
		if encrypted(b) {
			return nil, errors.New("the private key is encrypted, and NGINX is given no passphrase: store it unencrypted")
		}
		return parseKeyDER(b.Bytes)
	}
	return nil, errors.New("holds no PEM private key block")
}

func parseKeyDER(der []byte) (crypto.Signer, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("the private key does not parse (PKCS #1, PKCS #8 or SEC 1): %w", err)
	}
	switch k := k.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	}
	return nil, fmt.Errorf("the private key is a %T, which TLS in NGINX cannot use; use RSA, ECDSA or Ed25519", k)
}

// describe names a certificate in messages: its subject, quoted and cut.
func describe(c *x509.Certificate) string {
	s := c.Subject.String()
	if s == "" {
		return "no subject, serial " + conditions.Quote(c.SerialNumber.String())
	}
	return "subject " + conditions.Quote(s)
}
