package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
)

// What NGINX's OpenSSL checks when it loads a certificate chain
// (ssl_certificate, proxy_ssl_certificate): every certificate's key, and
// the digest every certificate but a self-signed one is signed with, must
// give at least the security level's bits; otherwise SSL_CTX_use_certificate
// fails ("ee key too small", "ca key too small", "ca md too weak") and
// NGINX refuses the whole configuration.
//
// The data plane runs Debian 12's OpenSSL 3.0, built with security level
// 2 as its default (not OpenSSL's own default of 1): 112 bits. Measured
// with Debian's nginx -t (the property test in internal/render checks it
// on every run): RSA keys of 1962 bits are refused and 1963 bits load;
// P-224 (112 bits) loads; SHA-224 signatures load, SHA-1 and MD5 ones do
// not, unless the certificate is self-signed.
const securityBits = 112

// minRSABits is the smallest RSA modulus OpenSSL 3.0 rates at
// securityBits or more. OpenSSL estimates an RSA key's strength with the
// formula of NIST SP 800-56B, not the table of SP 800-57 (which gives 112
// bits to 2048): the estimate reaches 112 at 1963 bits.
const minRSABits = 1963

// levelDescription names the level in messages.
const levelDescription = "NGINX's OpenSSL (security level 2: 112 bits)"

// checkKey refuses a certificate's public key OpenSSL would find too
// weak, or that TLS in NGINX cannot use. what is how OpenSSL names the
// failure for this position in the chain (ee or ca key too small).
func checkKey(c *x509.Certificate, what string) error {
	switch k := c.PublicKey.(type) {
	case *rsa.PublicKey:
		if bits := k.N.BitLen(); bits < minRSABits {
			return fmt.Errorf("has a %d-bit RSA key; %s refuses RSA keys under %d bits (%s)", bits, levelDescription, minRSABits, what)
		}
	case *ecdsa.PublicKey:
		// An elliptic curve key gives half its order's bits.
		if bits := k.Curve.Params().N.BitLen(); bits/2 < securityBits {
			return fmt.Errorf("has an ECDSA key on %s; %s refuses curves under %d bits (%s)", k.Curve.Params().Name, levelDescription, 2*securityBits, what)
		}
	case ed25519.PublicKey:
	default:
		return fmt.Errorf("has a %s key, which Gatewall does not accept; use RSA, ECDSA (P-224 to P-521) or Ed25519", keyAlgorithm(c))
	}
	return nil
}

func keyAlgorithm(c *x509.Certificate) string {
	if c.PublicKeyAlgorithm == x509.UnknownPublicKeyAlgorithm {
		return "public key algorithm Go does not know (" + spkiAlgorithm(c) + ")"
	}
	return c.PublicKeyAlgorithm.String()
}

// spkiAlgorithm is the OID of a certificate's public key algorithm.
func spkiAlgorithm(c *x509.Certificate) string {
	var spki struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(c.RawSubjectPublicKeyInfo, &spki); err != nil {
		return "unreadable"
	}
	return spki.Algorithm.Algorithm.String()
}

// weakSignatures are the algorithms whose digest gives fewer than
// securityBits (OpenSSL 3.0: MD5 39 bits, SHA-1 63).
var weakSignatures = map[x509.SignatureAlgorithm]bool{
	x509.MD2WithRSA: true, x509.MD5WithRSA: true,
	x509.SHA1WithRSA: true, x509.DSAWithSHA1: true, x509.ECDSAWithSHA1: true,
}

// strongUnknownSignatures are signature algorithms Go does not parse but
// whose digest gives at least securityBits: SHA-224 (112 bits) and Ed448.
var strongUnknownSignatures = map[string]bool{
	"1.2.840.113549.1.1.14": true, // sha224WithRSAEncryption
	"1.2.840.10045.4.3.1":   true, // ecdsa-with-SHA224
	"1.3.101.113":           true, // Ed448
}

// checkSignature refuses the digest a certificate is signed with when
// OpenSSL would: it does not look at a self-signed certificate's
// signature (nobody relies on it).
func checkSignature(c *x509.Certificate) error {
	if selfSigned(c) {
		return nil
	}
	switch alg := c.SignatureAlgorithm; {
	case weakSignatures[alg]:
		return fmt.Errorf("is signed with %s; %s refuses signatures under %d bits (ca md too weak)", alg, levelDescription, securityBits)
	case alg == x509.UnknownSignatureAlgorithm:
		if oid := signatureOID(c); !strongUnknownSignatures[oid] {
			return fmt.Errorf("is signed with an algorithm Gatewall does not accept (%s); use SHA-256 or better", oid)
		}
	}
	return nil
}

// signatureOID is the OID of the algorithm a certificate is signed with.
func signatureOID(c *x509.Certificate) string {
	var cert struct {
		TBS       asn1.RawValue
		Algorithm pkix.AlgorithmIdentifier
		Signature asn1.BitString
	}
	if _, err := asn1.Unmarshal(c.Raw, &cert); err != nil {
		return "unreadable"
	}
	return cert.Algorithm.Algorithm.String()
}

// selfSigned says whether OpenSSL takes a certificate for self-signed (and
// so does not check its signature's digest): its issuer is its subject,
// its authority key identifier, if any, is its own key identifier, and it
// is signed with an algorithm of its own key's type. The signature itself
// is not verified, as OpenSSL does not. Where Go's view may differ from
// OpenSSL's (names equal only once canonicalized), the certificate is
// taken for not self-signed: its digest is then checked, which can only
// refuse more.
func selfSigned(c *x509.Certificate) bool {
	if !bytes.Equal(c.RawSubject, c.RawIssuer) {
		return false
	}
	if len(c.AuthorityKeyId) > 0 && !bytes.Equal(c.AuthorityKeyId, c.SubjectKeyId) {
		return false
	}
	return signatureKeyAlgorithm[c.SignatureAlgorithm] == c.PublicKeyAlgorithm && c.PublicKeyAlgorithm != x509.UnknownPublicKeyAlgorithm
}

// signatureKeyAlgorithm is the key type each signature algorithm is made with.
var signatureKeyAlgorithm = map[x509.SignatureAlgorithm]x509.PublicKeyAlgorithm{
	x509.MD2WithRSA: x509.RSA, x509.MD5WithRSA: x509.RSA, x509.SHA1WithRSA: x509.RSA,
	x509.SHA256WithRSA: x509.RSA, x509.SHA384WithRSA: x509.RSA, x509.SHA512WithRSA: x509.RSA,
	x509.SHA256WithRSAPSS: x509.RSA, x509.SHA384WithRSAPSS: x509.RSA, x509.SHA512WithRSAPSS: x509.RSA,
	x509.DSAWithSHA1: x509.DSA, x509.DSAWithSHA256: x509.DSA,
	x509.ECDSAWithSHA1: x509.ECDSA, x509.ECDSAWithSHA256: x509.ECDSA, x509.ECDSAWithSHA384: x509.ECDSA, x509.ECDSAWithSHA512: x509.ECDSA,
	x509.PureEd25519: x509.Ed25519,
}
