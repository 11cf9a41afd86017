package certgen

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	_ "crypto/md5" // MD5 signatures
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// Digest is the digest an issuer signs a certificate with. An ECDSA issuer
// signs MD5, SHA-224 and PSS requests with SHA-256; an Ed25519 issuer
// ignores the digest.
type Digest string

// The digests.
const (
	SHA256 Digest = "sha256"
	SHA384 Digest = "sha384"
	SHA224 Digest = "sha224"
	SHA1   Digest = "sha1"
	MD5    Digest = "md5"
	PSS    Digest = "rsa-pss-sha256"
)

// Validity is when a certificate is valid.
type Validity int

// The validities; NGINX loads certificates whatever their dates.
const (
	Valid Validity = iota
	Expired
	NotYetValid
)

// Cert is a certificate and its key.
type Cert struct {
	DER  []byte
	X509 *x509.Certificate
	Key  crypto.Signer
	// Digest is what its issuer really signed it with.
	Digest Digest
}

// Spec says what certificate to make.
type Spec struct {
	// Name is the subject's common name; it also seeds the serial number.
	Name string
	Key  crypto.Signer
	// Issuer signs the certificate; nil makes it self-signed.
	Issuer   *Cert
	Digest   Digest
	CA       bool
	Validity Validity
}

// The dates of the validities: fixed, so that a seed gives the same
// certificates whenever it runs.
var (
	validFrom      = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	validUntil     = time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC)
	expiredFrom    = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	expiredUntil   = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	notYetFrom     = time.Date(2120, 1, 1, 0, 0, 0, 0, time.UTC)
	notYetValidEnd = time.Date(2125, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Issue makes a certificate.
func Issue(s Spec) (*Cert, error) {
	serial := sha256.Sum256([]byte(s.Name))
	tmpl := &x509.Certificate{
		SerialNumber: new(big.Int).Add(new(big.Int).SetBytes(serial[:12]), big.NewInt(1)),
		Subject:      pkix.Name{CommonName: s.Name},
		DNSNames:     []string{"example.com", "*.example.com"},
		NotBefore:    validFrom,
		NotAfter:     validUntil,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	switch s.Validity {
	case Expired:
		tmpl.NotBefore, tmpl.NotAfter = expiredFrom, expiredUntil
	case NotYetValid:
		tmpl.NotBefore, tmpl.NotAfter = notYetFrom, notYetValidEnd
	}
	if s.CA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
		tmpl.DNSNames = nil
	}
	parent, signer := tmpl, s.Key
	if s.Issuer != nil {
		parent, signer = s.Issuer.X509, s.Issuer.Key
	}
	alg, digest := signatureAlgorithm(signer, s.Digest)
	tmpl.SignatureAlgorithm = alg
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, s.Key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("certgen: issuing %s: %w", s.Name, err)
	}
	if digest == MD5 || digest == SHA224 {
		if der, err = resign(der, signer.(*rsa.PrivateKey), digest); err != nil {
			return nil, fmt.Errorf("certgen: signing %s with %s: %w", s.Name, digest, err)
		}
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certgen: parsing %s: %w", s.Name, err)
	}
	return &Cert{DER: der, X509: c, Key: s.Key, Digest: digest}, nil
}

// signatureAlgorithm is what Go signs with for a digest, and the digest the
// certificate really gets. MD5 and SHA-224 are signed with SHA-1 first,
// then re-signed (resign).
func signatureAlgorithm(signer crypto.Signer, d Digest) (x509.SignatureAlgorithm, Digest) {
	switch signer.(type) {
	case *rsa.PrivateKey:
		switch d {
		case SHA384:
			return x509.SHA384WithRSA, d
		case SHA1, MD5, SHA224:
			return x509.SHA1WithRSA, d
		case PSS:
			return x509.SHA256WithRSAPSS, d
		}
		return x509.SHA256WithRSA, SHA256
	case *ecdsa.PrivateKey:
		switch d {
		case SHA384:
			return x509.ECDSAWithSHA384, d
		case SHA1:
			return x509.ECDSAWithSHA1, d
		}
		return x509.ECDSAWithSHA256, SHA256
	case ed25519.PrivateKey:
		return x509.PureEd25519, "ed25519"
	}
	return 0, d
}

// OIDs of RSA signatures, DER encoded: they have the same length, so one
// replaces the other in a certificate's bytes.
var (
	oidSHA1WithRSA   = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05}
	oidMD5WithRSA    = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x04}
	oidSHA224WithRSA = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0e}
)

// resign turns a certificate signed with SHA-1 and RSA into one signed
// with MD5 or SHA-224, which Go's x509 does not sign with: the algorithm's
// OID is replaced in the signed part and in the signature's, and the
// signed part signed again.
func resign(der []byte, key *rsa.PrivateKey, d Digest) ([]byte, error) {
	oid, hash := oidMD5WithRSA, crypto.MD5
	if d == SHA224 {
		oid, hash = oidSHA224WithRSA, crypto.SHA224
	}
	var cert struct {
		TBS       asn1.RawValue
		Algorithm asn1.RawValue
		Signature asn1.BitString
	}
	if _, err := asn1.Unmarshal(der, &cert); err != nil {
		return nil, err
	}
	tbs := bytes.Replace(cert.TBS.FullBytes, oidSHA1WithRSA, oid, 1)
	h := hash.New()
	h.Write(tbs)
	sig, err := rsa.SignPKCS1v15(nil, key, hash, h.Sum(nil))
	if err != nil {
		return nil, err
	}
	cert.TBS = asn1.RawValue{FullBytes: tbs}
	cert.Algorithm = asn1.RawValue{FullBytes: bytes.Replace(cert.Algorithm.FullBytes, oidSHA1WithRSA, oid, 1)}
	cert.Signature = asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)}
	return asn1.Marshal(cert)
}

// PEM is the certificate as a PEM block.
func (c *Cert) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.DER})
}

// KeyFormat is how a private key is written.
type KeyFormat string

// The formats OpenSSL and Go both read.
const (
	PKCS8 KeyFormat = "pkcs8"
	PKCS1 KeyFormat = "pkcs1" // RSA only; others are written as PKCS #8
	SEC1  KeyFormat = "sec1"  // ECDSA only; others are written as PKCS #8
)

// KeyPEM writes a key as a PEM block in a format.
func KeyPEM(k crypto.Signer, f KeyFormat) []byte {
	var b *pem.Block
	switch k := k.(type) {
	case *rsa.PrivateKey:
		if f == PKCS1 {
			b = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
		}
	case *ecdsa.PrivateKey:
		if f == SEC1 {
			der, err := x509.MarshalECPrivateKey(k)
			if err != nil {
				panic(err) // a fixed key of a curve Go knows
			}
			b = &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
		}
	}
	if b == nil {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			panic(err) // a fixed key of a kind Go knows
		}
		b = &pem.Block{Type: "PRIVATE KEY", Bytes: der}
	}
	return pem.EncodeToMemory(b)
}
