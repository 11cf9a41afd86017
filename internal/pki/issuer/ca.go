package issuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// localValidity is long enough for any local session; the local runtime
// regenerates its certificates at every start, so they never need rotation.
const localValidity = 365 * 24 * time.Hour

// CA is a certificate authority held in memory.
type CA struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	// validity is how long the CA and what it issues are valid.
	validity time.Duration
}

// KeyPair is a PEM-encoded certificate and its private key.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA creates a self-signed CA named commonName, valid (with what it
// issues) for a year: the local runtime's.
func NewCA(commonName string) (*CA, error) { return NewCAValidFor(commonName, localValidity) }

// NewCAValidFor creates a self-signed CA named commonName; it and the
// certificates it issues are valid for validity.
func NewCAValidFor(commonName string, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, certPEM: pemBlock("CERTIFICATE", der), validity: validity}, nil
}

// CertPEM is the CA's certificate, PEM encoded.
func (ca *CA) CertPEM() []byte { return append([]byte(nil), ca.certPEM...) }

// Pool is a certificate pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// IssueServing issues a server certificate for the given IPs and DNS names.
func (ca *CA) IssueServing(commonName string, ips []net.IP, dnsNames []string) (KeyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		IPAddresses: ips,
		DNSNames:    dnsNames,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// IssueClient issues a client certificate; Kubernetes reads the user name from
// the common name and the groups from the organizations.
func (ca *CA) IssueClient(commonName string, groups []string) (KeyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(tmpl *x509.Certificate) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generating key for %q: %w", tmpl.Subject.CommonName, err)
	}
	serial, err := serialNumber()
	if err != nil {
		return KeyPair{}, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(ca.validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("issuing certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("encoding key for %q: %w", tmpl.Subject.CommonName, err)
	}
	return KeyPair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}

// TLSCertificate parses the pair for crypto/tls.
func (kp KeyPair) TLSCertificate() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parsing key pair: %w", err)
	}
	return c, nil
}

// WriteFiles writes the pair to dir/name.crt and dir/name.key (0600) and
// returns both paths.
func (kp KeyPair) WriteFiles(dir, name string) (certPath, keyPath string, err error) {
	certPath = filepath.Join(dir, name+".crt")
	keyPath = filepath.Join(dir, name+".key")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.WriteFile(certPath, kp.CertPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", certPath, err)
	}
	if err := os.WriteFile(keyPath, kp.KeyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", keyPath, err)
	}
	return certPath, keyPath, nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return n, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
