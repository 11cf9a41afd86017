package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate and key with serial.
func selfSigned(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "x"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func TestReloadingTLSConfig(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := NewReloadingTLSConfig(certFile, keyFile); err == nil {
		t.Fatal("missing files accepted")
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(name+".tmp", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(name+".tmp", name); err != nil {
			t.Fatal(err)
		}
	}
	c1, k1 := selfSigned(t, 1)
	write(certFile, c1)
	write(keyFile, k1)
	cfg, err := NewReloadingTLSConfig(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS13 {
		t.Fatal("TLS 1.3 is not the minimum")
	}
	serial := func() int64 {
		t.Helper()
		cert, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(cert.Certificate[0])
		return leaf.SerialNumber.Int64()
	}
	if serial() != 1 {
		t.Fatal("not the first certificate")
	}
	// Half a rotation (new certificate, old key) keeps the last good pair.
	c2, k2 := selfSigned(t, 2)
	write(certFile, c2)
	if serial() != 1 {
		t.Fatal("a mismatched pair replaced the good one")
	}
	write(keyFile, k2)
	if serial() != 2 {
		t.Fatal("the rotated certificate is not served")
	}
	os.Remove(keyFile)
	if serial() != 2 {
		t.Fatal("a missing file dropped the certificate")
	}
}
