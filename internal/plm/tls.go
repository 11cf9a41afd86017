package plm

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// TLSSettings configure how the Fetcher talks to an https:// endpoint. The
// zero value verifies the server against the system's roots and presents no
// client certificate.
type TLSSettings struct {
	// CAPEM holds the CA certificates that sign the server's certificate
	// (ca.crt); empty means the system's roots.
	CAPEM []byte
	// ClientCertPEM and ClientKeyPEM are the certificate and key for mutual
	// TLS (tls.crt, tls.key); both or neither.
	ClientCertPEM, ClientKeyPEM []byte
	// SkipVerify turns off verification of the server's certificate.
	SkipVerify bool
}

func (t TLSSettings) equal(o TLSSettings) bool {
	return bytes.Equal(t.CAPEM, o.CAPEM) && bytes.Equal(t.ClientCertPEM, o.ClientCertPEM) &&
		bytes.Equal(t.ClientKeyPEM, o.ClientKeyPEM) && t.SkipVerify == o.SkipVerify
}

// Validate reports whether the settings can be used, without using them.
func (t TLSSettings) Validate() error {
	_, err := t.config()
	return err
}

// config builds the client's tls.Config; every error names the Secret key the
// bad input comes from, because that is what an operator will have to fix.
func (t TLSSettings) config() (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// An operator may knowingly turn verification off (--plm-storage-skip-verify).
		InsecureSkipVerify: t.SkipVerify, //nolint:gosec // explicit opt-in
	}
	if len(t.CAPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CAPEM) {
			return nil, errors.New("ca.crt: no PEM-encoded certificate found")
		}
		cfg.RootCAs = pool
	}
	switch hasCert, hasKey := len(t.ClientCertPEM) > 0, len(t.ClientKeyPEM) > 0; {
	case hasCert && hasKey:
		pair, err := tls.X509KeyPair(t.ClientCertPEM, t.ClientKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("tls.crt/tls.key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case hasCert:
		return nil, errors.New("tls.key: missing (tls.crt is set)")
	case hasKey:
		return nil, errors.New("tls.crt: missing (tls.key is set)")
	}
	return cfg, nil
}
