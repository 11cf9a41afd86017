package snapgen

import (
	_ "embed"
)

// Fixed certificates: generating keys per snapshot would be slow, and
// Go's key generation ignores a seeded source, so snapshots would differ.
// Self-signed ECDSA P-256 for *.example.com, valid for a century; weak is
// a 1024-bit RSA certificate NGINX's OpenSSL refuses.
var (
	//go:embed certs/cert0.pem
	cert0 []byte
	//go:embed certs/key0.pem
	key0 []byte
	//go:embed certs/cert1.pem
	cert1 []byte
	//go:embed certs/key1.pem
	key1 []byte
	//go:embed certs/cert2.pem
	cert2 []byte
	//go:embed certs/key2.pem
	key2 []byte
	//go:embed certs/weak-cert.pem
	weakCert []byte
	//go:embed certs/weak-key.pem
	weakKey []byte
)
