package pki

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
)

// ParseCABundle checks a bundle of CA certificates (a ConfigMap's ca.crt)
// and re-encodes it: each certificate once, in the order given. Every
// block must be a certificate that parses; text before and between blocks
// is left out, text after the last one is refused (it is most likely a
// block cut short). OpenSSL loads trusted certificates without the checks
// of its security level, so none are made here.
func ParseCABundle(data []byte) ([]byte, error) {
	blocks, rest, err := decodeBlocks(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("holds data that is not PEM")
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	for i, b := range blocks {
		switch b.Type {
		case blockCertificate:
		case "TRUSTED " + blockCertificate:
			return nil, fmt.Errorf("PEM block %d is a TRUSTED CERTIFICATE (OpenSSL's certificate with trust settings), which NGINX does not read here; give it as a CERTIFICATE block (openssl x509 -in FILE)", i+1)
		default:
			return nil, fmt.Errorf("holds a PEM %s block; only CERTIFICATE blocks are allowed", b.Type)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is a certificate that does not parse: %w", i+1, err)
		}
		if !seen[string(c.Raw)] {
			seen[string(c.Raw)] = true
			encode(&out, blockCertificate, c.Raw)
		}
	}
	if len(seen) == 0 {
		return nil, errors.New("holds no PEM certificate")
	}
	return out.Bytes(), nil
}
